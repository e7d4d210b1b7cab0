// /api/v1/broadcasts (SEND and FULL keys; the report also TEST keys): create, list,
// get, send, cancel, decide, resend and the report (spec: email-broadcast-api.md).
// A domain-restricted key creates broadcasts only from its domains and sees only
// theirs: another domain's broadcast, and its report, are 404.
import { addComponents } from '../../platform/http/components.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { fromDomainRefusal } from '../auth/permissions.ts';
import type { Domains } from '../domains/domains.ts';
import { checkPartSizes } from '../http/content-size.ts';
import { parseMailbox } from '../http/email-address.ts';
import { MAIL_BODY_ERRORS, MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import { IdParams } from '../http/mail-schemas.ts';
import type { Templates } from '../templates/templates.ts';
import { resolvedOrRefused } from '../templates/template-refusals.ts';
import { LIST_LIMIT, toBroadcast, type BroadcastRefusal, type Broadcasts, type Transition } from './broadcasts.ts';
import { BroadcastReport, broadcastReport } from './broadcast-report.ts';
import { BroadcastList, BroadcastPageQuery, BroadcastSchema, CreateBody, ResendBroadcastBody, SendBroadcastBody } from './broadcast-schemas.ts';
import { isUuid } from '../../platform/http/validation.ts';

/** Bodies that may hold html and text of 2 MB each, escaped as JSON. */
const BODY_LIMIT = 12 * 1024 * 1024;
export interface BroadcastRouteDeps {
  broadcasts: Broadcasts;
  domains: Domains;
  templates: Templates;
  pg: Pool;
}

export async function broadcastRoutes(app: App, deps: BroadcastRouteDeps): Promise<void> {
  const { broadcasts, domains, templates, pg } = deps;
  const tags = ['broadcasts'];
  const config = { mailAccess: 'broadcasts' as const };
  addComponents(app, [BroadcastSchema, BroadcastList, BroadcastReport]);

  const found = <T>(row: T | undefined): T => {
    if (!row) throw notFound('broadcast');
    return row;
  };
  /** The broadcast a transition left, or the answer to its refusal. */
  const done = (t: Transition) => {
    if (!t.ok) throw refused(t);
    return toBroadcast(t.broadcast);
  };

  app.post('/broadcasts', {
    config,
    bodyLimit: BODY_LIMIT,
    schema: {
      tags, operationId: 'createBroadcast', summary: 'Create a broadcast (a draft, or scheduled with scheduled_at)',
      body: CreateBody,
      response: { 201: withRateLimitHeaders(BroadcastSchema, 'The new broadcast.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404, 422) },
    },
  }, async (request, reply) => {
    const grant = request.mailAuth;
    const body = request.body;
    const from = parseMailbox(body.from);
    if (!from) throw new ApiError(400, 'invalid_from', 'from must be `email` or `Name <email>`.', [{ path: '/from', message: 'not an address' }]);
    const refusal = fromDomainRefusal(grant, from.domain, await domains.verifiedNames(grant.organizationId));
    if (refusal) throw refusal;
    if (body.reply_to !== undefined && !parseMailbox(body.reply_to)) throw new ApiError(400, 'invalid_reply_to', 'reply_to must be `email` or `Name <email>`.', [{ path: '/reply_to', message: 'not an address' }]);
    const content = await contentOf(body, grant.organizationId, templates);
    if (body.ab_test && !body.subject_b) throw new ApiError(422, 'subject_b_required', 'An A/B test needs subject_b, the subject it tests against.', [{ path: '/subject_b', message: 'required with ab_test' }]);
    const { rows: topics } = await pg.query('SELECT 1 FROM mail_topics WHERE organization_id = $1 AND slug = $2', [grant.organizationId, body.topic]);
    if (topics.length === 0) throw new ApiError(422, 'topic_not_found', `The organization has no topic ${body.topic}; create it under /api/v1/topics.`, [{ path: '/topic', message: 'no such topic' }]);
    if (body.segment_id !== undefined) {
      const { rows: segments } = isUuid(body.segment_id) ? await pg.query('SELECT 1 FROM mail_segments WHERE organization_id = $1 AND id = $2', [grant.organizationId, body.segment_id]) : { rows: [] };
      if (segments.length === 0) throw new ApiError(422, 'segment_not_found', 'segment_id is not a segment of this organization.', [{ path: '/segment_id', message: 'no such segment' }]);
    }
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
    });
    return reply.status(201).send(toBroadcast(row));
  });

  app.get('/broadcasts', {
    config,
    schema: {
      tags, operationId: 'listBroadcasts', summary: `List broadcasts (up to ${LIST_LIMIT} a page, newest first)`,
      description: 'A page of broadcasts; `next_cursor`, passed back as `cursor`, gives the next (null on the last page).',
      querystring: BroadcastPageQuery,
      response: { 200: withRateLimitHeaders(BroadcastList, 'A page of broadcasts, newest first.'), ...mailErrorResponses(...MAIL_ERRORS, 400) },
    },
  }, async (request) => broadcasts.list(request.mailAuth.organizationId, request.mailAuth.domains, request.query, toBroadcast));

  const action = (operationId: string, summary: string, description: string) => ({
    config,
    schema: {
      tags, operationId, summary, description, params: IdParams,
      response: { 200: withRateLimitHeaders(BroadcastSchema, 'The broadcast.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404, 409) },
    },
  });

  app.get('/broadcasts/:id', {
    config,
    schema: { tags, operationId: 'getBroadcast', summary: 'Get a broadcast', params: IdParams, response: { 200: withRateLimitHeaders(BroadcastSchema, 'The broadcast.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => toBroadcast(found(await broadcasts.get(request.mailAuth.organizationId, uuidOr404(request.params.id), request.mailAuth.domains))));

  const send = action('sendBroadcast', 'Send a draft or scheduled broadcast now, or schedule it', 'With `scheduled_at`: scheduled for then (a new time replaces the pending one). Without (no body, or `{}`): sending starts now; the worker begins within a second.');
  app.post('/broadcasts/:id/send', {
    ...send,
    preValidation: noBodyIsEmpty,
    schema: { ...send.schema, body: SendBroadcastBody },
  }, async (request) => {
    const { organizationId, domains: scope } = request.mailAuth;
    const at = request.body.scheduled_at;
    return done(await broadcasts.send(organizationId, uuidOr404(request.params.id), scope, at ? new Date(at) : null));
  });

  const cancel = action('cancelBroadcast', 'Cancel a broadcast', 'Any state but sent and canceled. Pending jobs are removed; a sending broadcast stops at its next batch of 500 recipients (messages already queued still go out).');
  app.post('/broadcasts/:id/cancel', cancel, async (request) =>
    done(await broadcasts.cancel(request.mailAuth.organizationId, uuidOr404(request.params.id), request.mailAuth.domains)));

  const decideRoute = action('decideBroadcast', 'Pick the A/B winner now', 'Only in testing. The decision is queued at once; the status stays testing until the worker writes ab_winner and ab_decided_at, then it sends the rest.');
  app.post('/broadcasts/:id/decide', decideRoute, async (request) =>
    done(await broadcasts.decide(request.mailAuth.organizationId, uuidOr404(request.params.id), request.mailAuth.domains)));

  app.post('/broadcasts/:id/resend', {
    config,
    preValidation: noBodyIsEmpty,
    schema: {
      tags, operationId: 'resendBroadcast', summary: 'Resend a sent broadcast to its non-openers',
      description: 'A child broadcast (draft, or scheduled with scheduled_at) copying content, topic and segment, without subject B; its audience is the parent\'s recipients with no open or click when it fans out.',
      params: IdParams,
      body: ResendBroadcastBody,
      response: { 201: withRateLimitHeaders(BroadcastSchema, 'The child broadcast.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404, 409, 422) },
    },
  }, async (request, reply) => {
    const body = request.body;
    const child = await broadcasts.resend(request.mailAuth.organizationId, uuidOr404(request.params.id), request.mailAuth.domains, {
      ...(body.subject !== undefined ? { subject: body.subject } : {}),
      ...(body.scheduled_at !== undefined ? { scheduled_at: new Date(body.scheduled_at) } : {}),
    });
    return reply.status(201).send(done(child));
  });

  app.get('/broadcasts/:id/report', {
    config: { mailAccess: 'reports' as const },
    schema: { tags, operationId: 'getBroadcastReport', summary: 'The report of a broadcast (sends no mail)', params: IdParams, response: { 200: withRateLimitHeaders(BroadcastReport, 'Counts, rates, variants and top links.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const b = found(await broadcasts.get(request.mailAuth.organizationId, uuidOr404(request.params.id), request.mailAuth.domains));
    return broadcastReport(pg, b);
  });
}

/** The answer to a refused transition. */
function refused(r: BroadcastRefusal): ApiError {
  switch (r.reason) {
    case 'not_found': return notFound('broadcast');
    case 'not_schedulable': return new ApiError(409, r.reason, `The broadcast is ${r.status}; only a draft or scheduled broadcast can be sent or scheduled.`);
    case 'not_cancelable': return new ApiError(409, r.reason, `The broadcast is already ${r.status}.`);
    case 'not_testing': return new ApiError(409, r.reason, `The broadcast is ${r.status}; only a broadcast in its A/B test can be decided.`);
    case 'not_resendable': return new ApiError(409, r.reason, r.isResend ? 'The broadcast is itself a resend; resend its parent instead.' : `The broadcast is ${r.status}; only a sent broadcast can be resent.`);
    case 'subject_from_template': return new ApiError(422, r.reason, 'The broadcast takes its subject from its template; a resend cannot change it.');
    case 'resend_exists': return new ApiError(409, r.reason, `The broadcast already has a resend (${r.resendId}); cancel it first to make another.`);
    case 'resend_too_early': return new ApiError(409, r.reason, `A resend can go out ${r.waitHours} hours after its parent finished: not before ${r.earliest.toISOString()}.`);
  }
}

/** A request without a body is one with `{}` (spec: "send with empty body or {}"). */
async function noBodyIsEmpty(request: { body: unknown }): Promise<void> {
  request.body ??= {};
}

/** Ids that are not uuids name no broadcast (and must not reach a uuid column). */
function uuidOr404(id: string): string {
  if (!isUuid(id)) throw notFound('broadcast');
  return id;
}

/** The content of a new broadcast: its template's published version, or its own subject, html and text. */
async function contentOf(body: CreateBody, organizationId: string, templates: Templates) {
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
