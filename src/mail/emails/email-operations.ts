// What a key may do with emails, one function per operation, for POST /emails,
// GET /emails/:id, GET /emails, POST /emails/:id/cancel and PATCH /emails/:id
// and for the MCP tools alike: the same checks (From domain, daily allowance,
// idempotency key), the same stores, the same refusals.
import { ApiError, notFound } from '../../platform/http/errors.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { MailKeyGrant } from '../accounts/mail-keys.ts';
import { fromDomainRefusal } from '../auth/permissions.ts';
import type { Domains } from '../domains/domains.ts';
import type { RecipientLimits } from '../sending/recipient-limits.ts';
import { toEmail, toListed } from './email-answers.ts';
import { listMessages } from './email-list.ts';
import { keyReusedError, listRefusalError, orChangeRefused } from './email-refusals.ts';
import type { SendEmailInput } from './email-schemas.ts';
import { prepareSend } from './email-template.ts';
import type { Templates } from '../templates/templates.ts';
import type { MessageChanges } from './message-changes.ts';
import type { MessageOutbox } from './message-outbox.ts';
import type { Messages, StoreResult } from './messages.ts';
import { overDailyLimit, refuseServiceKey, requestHashOf, type PreparedMessage } from './prepare-message.ts';

export interface EmailOperationDeps {
  domains: Domains;
  messages: Messages;
  outbox: MessageOutbox;
  changes: MessageChanges;
  /** The organization's smallest daily allowance: a message of more recipients could never go out. */
  recipientLimits: RecipientLimits;
  /** Test hook: the process dies right after storing a message, before publishing it. */
  crashAfterStore: boolean;
  /** Published templates a send may name (Resend's `template`). */
  templates: Templates;
}

/**
 * Refuses From domains the key may not use or the organization has not verified, messages
 * larger than a daily allowance, and topics that are not the organization's, by the place of the item.
 */
export async function checkSenders(deps: Pick<EmailOperationDeps, 'domains' | 'recipientLimits' | 'messages'>, grant: MailKeyGrant, items: readonly { message: PreparedMessage; at: string }[]): Promise<Map<string, ApiError>> {
  const refused = new Map<string, ApiError>();
  const topicIds = [...new Set(items.map((i) => i.message.topic_id).filter((t) => t !== null))];
  const [verified, limit, topics] = await Promise.all([
    deps.domains.verifiedNames(grant.organizationId),
    deps.recipientLimits.of(grant.organizationId),
    knownTopics(deps.messages.pg, grant.organizationId, topicIds),
  ]);
  for (const { message, at } of items) {
    const refusal = fromDomainRefusal(grant, message.from.domain, verified, at) ?? overDailyLimit(message, limit, at) ?? unknownTopic(message.topic_id, topics, at);
    if (refusal) refused.set(at, refusal);
  }
  return refused;
}

/** Which of `ids` (a topic's id or slug) name a topic of the organization. */
async function knownTopics(pg: Pool, organizationId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await pg.query<{ id: string; slug: string }>('SELECT id::text AS id, slug FROM mail_topics WHERE organization_id = $1 AND (id::text = ANY($2) OR slug = ANY($2))', [organizationId, ids]);
  return new Set(rows.flatMap((r) => [r.id, r.slug]));
}

/** 422 topic_not_found for a topic_id that names no topic of the organization (its unsubscribe link would name none). */
function unknownTopic(topicId: string | null, known: Set<string>, at: string): ApiError | undefined {
  if (topicId === null || known.has(topicId)) return undefined;
  return new ApiError(422, 'topic_not_found', `topic_id ${topicId.slice(0, 64)} is not a topic of this organization (its id or slug).`, [{ path: `${at}/topic_id`, message: 'not found' }]);
}

export function crashIfAsked(deps: Pick<EmailOperationDeps, 'crashAfterStore'>): void {
  if (deps.crashAfterStore) process.kill(process.pid, 'SIGKILL');
}

/**
 * Stores one message and queues it; `headerKey` (the Idempotency-Key header) wins over the body's key.
 * A repeat of a key answers the original id with `replayed`, sending nothing new.
 */
export async function sendEmail(deps: EmailOperationDeps, grant: MailKeyGrant, body: SendEmailInput, headerKey?: string): Promise<{ id: string; replayed: boolean }> {
  const key = headerKey ?? body.idempotency_key;
  // A repeat of a send with a template is answered before the template is read: a replay
  // whatever became of the template since (edited, unpublished, removed).
  if (key !== undefined && body.template !== undefined) {
    refuseServiceKey(key);
    const earlier = await deps.messages.earlier(grant.organizationId, key, requestHashOf(body));
    if (earlier) return answerStored(deps, earlier);
  }
  const message = await prepareSend(deps.templates, grant.organizationId, body, headerKey);
  refuseServiceKey(message.idempotencyKey);
  const refusal = (await checkSenders(deps, grant, [{ message, at: '' }])).get('');
  if (refusal) throw refusal;
  return answerStored(deps, await deps.messages.store(grant.organizationId, grant.keyId, message));
}

/** The answer to a send stored (or found stored under its key): queued unless it was, or 409 for a key used by another request. */
async function answerStored(deps: EmailOperationDeps, result: StoreResult): Promise<{ id: string; replayed: boolean }> {
  if (!result.ok) throw keyReusedError();
  const stored = result.stored;
  crashIfAsked(deps);
  // Stored is durable: the answer need not wait for Kafka (the relay publishes what this process
  // could not). A replay waits, so that what it found unqueued is queued when it answers.
  if (stored.unpublished) {
    const publishing = deps.outbox.publish([stored.id], stored.replayed);
    if (stored.replayed) await publishing;
  }
  return { id: stored.id, replayed: stored.replayed };
}

/** The email as the API shows it; 404 for an id that is not one of the key's emails. */
export async function getEmail(messages: Messages, grant: MailKeyGrant, id: string) {
  const row = isUuid(id) ? await messages.get(grant.organizationId, id, grant.domains) : undefined;
  if (!row) throw notFound('email');
  return toEmail(row);
}

/** A page of the key's emails, newest first; `after` (older) or `before` (newer) name an email of a previous page. */
export async function listEmails(messages: Messages, grant: MailKeyGrant, query: { limit?: number; after?: string; before?: string }) {
  const { limit = 20, after, before } = query;
  const page = await listMessages(messages.pg, { organizationId: grant.organizationId, domains: grant.domains, limit, after, before });
  if (!page.ok) throw listRefusalError(page.refusal);
  return { object: 'list' as const, has_more: page.more, data: page.rows.map(toListed) };
}

/** The id, when it can name an email; 404 otherwise. */
const emailId = (id: string) => {
  if (!isUuid(id)) throw notFound('email');
  return id;
};

/** Cancels an email not yet handed over; 404 for none of the key's, 409 not_cancelable for one the sender holds or handed over. */
export async function cancelEmail(changes: MessageChanges, grant: MailKeyGrant, id: string) {
  orChangeRefused(await changes.cancel(grant.organizationId, emailId(id), grant.domains));
  return { object: 'email' as const, id };
}

/** Moves a scheduled email not tried yet to `at`; 409 not_schedulable otherwise. */
export async function rescheduleEmail(changes: MessageChanges, grant: MailKeyGrant, id: string, at: Date) {
  orChangeRefused(await changes.reschedule(grant.organizationId, emailId(id), grant.domains, at));
  return { object: 'email' as const, id };
}
