// What a key may do with broadcasts, one function per operation, for
// /api/v1/broadcasts and the MCP tools alike (spec: email-broadcast-api.md):
// the same create rules, the same transitions, the same refusals. A
// domain-restricted key creates broadcasts only from its domains and sees only
// theirs: another domain's broadcast, and its report, are 404.
import { ApiError } from '../../platform/http/errors.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { MailKeyGrant } from '../accounts/mail-keys.ts';
import { fromDomainRefusal } from '../auth/permissions.ts';
import type { Domains } from '../domains/domains.ts';
import { checkPartSizes } from '../http/content-size.ts';
import { parseMailbox } from '../http/email-address.ts';
import type { Templates } from '../templates/templates.ts';
import { resolvedOrRefused } from '../templates/template-refusals.ts';
import { broadcastReport } from './broadcast-report.ts';
import { broadcastId, done, found } from './broadcast-refusals.ts';
import type { CreateBody } from './broadcast-schemas.ts';
import { toBroadcast, type Broadcasts } from './broadcasts.ts';

export interface BroadcastOperationDeps {
  broadcasts: Broadcasts;
  domains: Domains;
  templates: Templates;
  pg: Pool;
}

/**
 * What a new broadcast is made from: the spec's create body, whose topic Resend's broadcasts
 * (at the root paths) may leave out (null: the segment's subscribed contacts, no topic rule).
 */
export type NewBroadcastInput = Omit<CreateBody, 'topic'> & { topic: string | null; resend_face?: boolean; send_now?: boolean };

/** A draft, or a scheduled broadcast with scheduled_at, after every create rule of the spec. */
export async function createBroadcast(deps: BroadcastOperationDeps, grant: MailKeyGrant, body: NewBroadcastInput) {
  const { broadcasts, domains, templates, pg } = deps;
  const from = parseMailbox(body.from);
  if (!from) throw new ApiError(400, 'invalid_from', 'from must be `email` or `Name <email>`.', [{ path: '/from', message: 'not an address' }]);
  const refusal = fromDomainRefusal(grant, from.domain, await domains.verifiedNames(grant.organizationId));
  if (refusal) throw refusal;
  if (body.reply_to !== undefined && !parseMailbox(body.reply_to)) throw new ApiError(400, 'invalid_reply_to', 'reply_to must be `email` or `Name <email>`.', [{ path: '/reply_to', message: 'not an address' }]);
  const content = await contentOf(body, grant.organizationId, templates);
  if (body.ab_test && !body.subject_b) throw new ApiError(422, 'subject_b_required', 'An A/B test needs subject_b, the subject it tests against.', [{ path: '/subject_b', message: 'required with ab_test' }]);
  if (body.topic !== null) await checkTopic(pg, grant.organizationId, body.topic);
  if (body.segment_id !== undefined) await checkSegment(pg, grant.organizationId, body.segment_id);
  const row = await broadcasts.create(grant.organizationId, {
    name: body.name,
    from_address: body.from.trim(),
    from_domain: from.domain,
    topic: body.topic,
    segment_id: body.segment_id ?? null,
    ...content,
    subject_b: body.subject_b ?? null,
    ab_test: body.ab_test ?? null,
    reply_to: body.reply_to ?? null,
    preview_text: body.preview_text ?? null,
    scheduled_at: body.scheduled_at ? new Date(body.scheduled_at) : null,
    parent_id: null,
    resend_face: body.resend_face ?? false,
    send_now: body.send_now ?? false,
  });
  return toBroadcast(row);
}

/** 422 topic_not_found unless the organization has a topic of this slug. */
export async function checkTopic(pg: Pool, organizationId: string, slug: string, path = '/topic'): Promise<void> {
  const { rows: topics } = await pg.query('SELECT 1 FROM mail_topics WHERE organization_id = $1 AND slug = $2', [organizationId, slug]);
  if (topics.length === 0) throw new ApiError(422, 'topic_not_found', `The organization has no topic ${slug}; create it under /api/v1/topics.`, [{ path, message: 'no such topic' }]);
}

/** 422 segment_not_found unless the segment is the organization's. */
export async function checkSegment(pg: Pool, organizationId: string, segmentId: string): Promise<void> {
  const { rows: segments } = isUuid(segmentId) ? await pg.query('SELECT 1 FROM mail_segments WHERE organization_id = $1 AND id = $2', [organizationId, segmentId]) : { rows: [] };
  if (segments.length === 0) throw new ApiError(422, 'segment_not_found', 'segment_id is not a segment of this organization.', [{ path: '/segment_id', message: 'no such segment' }]);
}

/** A page of the broadcasts the key may see, newest first. */
export const listBroadcasts = (broadcasts: Broadcasts, grant: MailKeyGrant, query: { limit?: number; cursor?: string }) =>
  broadcasts.list(grant.organizationId, grant.domains, query, toBroadcast);

export const getBroadcast = async (broadcasts: Broadcasts, grant: MailKeyGrant, id: string) =>
  toBroadcast(found(await broadcasts.get(grant.organizationId, broadcastId(id), grant.domains)));

/** Scheduled for `at`, or sending now without it; 409 not_schedulable unless draft or scheduled. */
export const sendBroadcast = async (broadcasts: Broadcasts, grant: MailKeyGrant, id: string, at: string | undefined) =>
  done(await broadcasts.send(grant.organizationId, broadcastId(id), grant.domains, at ? new Date(at) : null));

export const cancelBroadcast = async (broadcasts: Broadcasts, grant: MailKeyGrant, id: string) =>
  done(await broadcasts.cancel(grant.organizationId, broadcastId(id), grant.domains));

export const decideBroadcast = async (broadcasts: Broadcasts, grant: MailKeyGrant, id: string) =>
  done(await broadcasts.decide(grant.organizationId, broadcastId(id), grant.domains));

/** The child broadcast to the parent's non-openers (spec: Resend rules). */
export const resendBroadcast = async (broadcasts: Broadcasts, grant: MailKeyGrant, id: string, change: { subject?: string; scheduled_at?: string }) =>
  done(await broadcasts.resend(grant.organizationId, broadcastId(id), grant.domains, {
    ...(change.subject !== undefined ? { subject: change.subject } : {}),
    ...(change.scheduled_at !== undefined ? { scheduled_at: new Date(change.scheduled_at) } : {}),
  }));

/** The report of a broadcast the key may see (sends no mail). */
export async function getBroadcastReport(deps: Pick<BroadcastOperationDeps, 'broadcasts' | 'pg'>, grant: MailKeyGrant, id: string) {
  const b = found(await deps.broadcasts.get(grant.organizationId, broadcastId(id), grant.domains));
  return broadcastReport(deps.pg, b);
}

/** The content of a new broadcast: its template's published version, or its own subject, html and text. */
async function contentOf(body: NewBroadcastInput, organizationId: string, templates: Templates) {
  if (body.template) {
    if (body.subject !== undefined || body.html !== undefined || body.text !== undefined) {
      throw new ApiError(422, 'template_with_content', 'A broadcast takes its subject, html and text from its template, or from the request, not both.', [{ path: '/template', message: 'excludes subject, html and text' }]);
    }
    if (!body.template.id && !body.template.slug) throw new ApiError(400, 'invalid_template', 'template needs an id or a slug.', [{ path: '/template', message: 'id or slug required' }]);
    const t = resolvedOrRefused(await templates.resolve(organizationId, body.template));
    return { template: { id: t.id, slug: t.slug, version: t.version }, subject: t.subject, html: t.html, text: t.text };
  }
  if (body.subject === undefined) throw new ApiError(400, 'missing_subject', 'subject is required without a template.', [{ path: '/subject', message: 'required' }]);
  if (body.html === undefined && body.text === undefined) throw new ApiError(400, 'missing_content', 'html or text is required without a template.', [{ path: '/html', message: 'html or text required' }]);
  checkPartSizes(body);
  return { template: null, subject: body.subject, html: body.html ?? null, text: body.text ?? null };
}
