// POST /emails, POST /emails/batch, GET /emails/:id, GET /emails (the list),
// POST /emails/:id/cancel and PATCH /emails/:id (reschedule), in Resend's shapes
// (the `resend` SDK is a client). A message is stored with its idempotency key,
// then published to mail.messages (message-outbox.ts); the answer is 200 even when
// the publication waits for the relay. Rules: README "Sending".
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { RATE_LIMIT_HEADERS, withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { Domains } from '../domains/domains.ts';
import type { MailKeyGrant } from '../accounts/mail-keys.ts';
import { fromDomainRefusal } from '../auth/permissions.ts';
import type { RecipientLimits } from '../sending/recipient-limits.ts';
import { MAIL_BODY_ERRORS, MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import { IdParams, NullableTimestamp, Timestamp } from '../http/mail-schemas.ts';
import { BatchEmailItem, SendEmailBody } from './email-schemas.ts';
import type { MessageOutbox } from './message-outbox.ts';
import { listMessages, type ListedRow, type ListRefusal } from './email-list.ts';
import { MessageChanges, type MessageChangeResult } from './message-changes.ts';
import { addressing, type MessageRow, type Messages, type Stored } from './messages.ts';
import { overDailyLimit, prepareMessage, refuseServiceKey, type PreparedMessage } from './prepare-message.ts';

export const MAX_BATCH = 100;
/** Bodies up to this size: 40 MB of attachments in base64, and the parts. */
export const SEND_BODY_LIMIT = 60 * 1024 * 1024;
export const BATCH_BODY_LIMIT = 50 * 1024 * 1024;

const LAST_EVENTS = ['queued', 'scheduled', 'suppressed', 'canceled', 'delivered', 'delivery_delayed', 'bounced', 'failed', 'complained'] as const;

const Created = Type.Object({ id: Type.String() }, { $id: 'EmailId', title: 'EmailId' });
const BatchCreated = Type.Object(
  {
    data: Type.Array(ref(Created), { description: 'One id per accepted item, in order.' }),
    errors: Type.Optional(Type.Array(Type.Object({ index: Type.Integer(), message: Type.String(), code: Type.String() }), { description: 'Permissive mode only: the refused items.' })),
  },
  { $id: 'EmailBatchResult', title: 'EmailBatchResult' },
);
/** What an email shows both whole and in a list. */
const EmailSummary = {
  id: Type.String(),
  from: Type.String(),
  to: Type.Array(Type.String()),
  cc: Type.Array(Type.String()),
  bcc: Type.Array(Type.String()),
  reply_to: Type.Array(Type.String()),
  subject: Type.String(),
  topic_id: Type.Union([Type.String(), Type.Null()]),
  scheduled_at: NullableTimestamp(),
  created_at: Timestamp(),
};
const EmailObject = Type.Object(
  {
    object: Type.Literal('email'),
    ...EmailSummary,
    html: Type.Union([Type.String(), Type.Null()]),
    text: Type.Union([Type.String(), Type.Null()]),
    headers: Type.Record(Type.String(), Type.String()),
    tags: Type.Array(Type.Object({ name: Type.String(), value: Type.String() })),
    last_event: StringEnum(LAST_EVENTS, {
      description: 'queued: waiting for the sender (its turn, a daily allowance or the send rate); scheduled: held until scheduled_at; suppressed: every recipient is on the suppression list, nothing is sent; canceled: canceled before it was handed over, never sent; ' +
        'delivered: handed over to the relay; delivery_delayed: a transient failure, another attempt follows; bounced: refused for good (SMTP 5xx, or a bounce report received later); failed: 4 transient failures, no more attempts; complained: a recipient reported it as spam (a feedback report).',
    }),
    attempts: Type.Array(Type.Object({
      attempt: Type.Integer({ minimum: 1 }),
      at: Type.String({ format: 'date-time' }),
      outcome: StringEnum(['delivered', 'deferred', 'bounced', 'skipped'] as const, {
        description: 'skipped: not handed over by the sender\'s own decision: every recipient suppressed or unsubscribed while it waited (last_event suppressed), or more recipients than a daily cap lowered since it was accepted (last_event failed).',
      }),
      response: Type.String({ description: 'The relay\'s reply, or the transport error, or why it was skipped; recipients refused or left out are named.' }),
    }), { description: 'The hand-over attempts, oldest first.' }),
    suppressed: Type.Array(Type.String(), { description: 'Recipients left out because they are on the suppression list.' }),
    recipient_count: Type.Integer({ description: 'Recipients it goes to; each counts as one email for the daily allowances.' }),
    attachments: Type.Array(Type.Object({ filename: Type.String(), content_type: Type.Union([Type.String(), Type.Null()]), content_id: Type.Union([Type.String(), Type.Null()]), size: Type.Integer() })),
    idempotency_key: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'Email', title: 'Email' },
);

/** Resend's list item: the email without its parts, tags and attachments. */
const ListedEmail = Type.Object(
  {
    ...EmailSummary,
    last_event: StringEnum(LAST_EVENTS, { description: 'As on GET /emails/:id.' }),
  },
  { $id: 'ListedEmail', title: 'ListedEmail' },
);
const EmailList = Type.Object(
  {
    object: Type.Literal('list'),
    has_more: Type.Boolean({ description: 'More emails lie beyond this page, in the direction asked (older after `after` or without a cursor, newer with `before`).' }),
    data: Type.Array(ref(ListedEmail), { description: 'Newest first.' }),
  },
  { $id: 'EmailList', title: 'EmailList' },
);
const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Emails per page (1 to 100, default 20).' })),
    after: Type.Optional(Type.String({ maxLength: 64, description: 'The id of an email of a previous page: the page holds the emails older than it.' })),
    before: Type.Optional(Type.String({ maxLength: 64, description: 'The id of an email of a previous page: the page holds the emails newer than it (the nearest ones). Not with after.' })),
  },
  { additionalProperties: false },
);
const Changed = Type.Object({ object: Type.Literal('email'), id: Type.String() }, { $id: 'EmailChanged', title: 'EmailChanged' });
const UpdateEmailBody = Type.Object(
  { scheduled_at: Type.String({ format: 'date-time', description: 'ISO 8601 with an offset: the new time; a time past or now sends it at once.' }) },
  { additionalProperties: false, $id: 'UpdateEmail', title: 'UpdateEmail' },
);

/** The message's last event: what the sender made of it, or else its state when accepted. */
function lastEvent(r: Pick<MessageRow, 'report' | 'delivery_state' | 'status'>): (typeof LAST_EVENTS)[number] {
  // A report received after the hand-over is the latest word on it.
  if (r.report) return r.report;
  switch (r.delivery_state) {
    case 'sent': return 'delivered';
    case 'retrying': return 'delivery_delayed';
    case 'bounced': case 'failed': case 'suppressed': case 'canceled': return r.delivery_state;
    default: return r.status;
  }
}

const REPLAY_HEADER = { 'idempotent-replayed': Type.Literal('true', { description: 'Present on a repeat of an idempotency key: the id is the original message\'s, nothing new was sent.' }) };

/** The summary fields (EmailSummary) of a stored message, as the API answers them. */
const toSummary = (r: ListedRow) => ({
  id: r.id,
  ...addressing(r),
  topic_id: r.topic_id,
  scheduled_at: r.scheduled_at?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
});

const toEmail = (r: MessageRow) => ({
  object: 'email' as const,
  ...toSummary(r),
  html: r.html,
  text: r.text_body,
  headers: r.headers,
  tags: r.tags,
  last_event: lastEvent(r),
  attempts: r.attempts ?? [],
  suppressed: r.suppressed,
  recipient_count: r.recipient_count,
  attachments: r.attachments,
  idempotency_key: r.idempotency_key,
});

const toListed = (r: ListedRow) => ({ ...toSummary(r), last_event: lastEvent(r) });

export interface EmailRouteDeps {
  domains: Domains;
  messages: Messages;
  outbox: MessageOutbox;
  /** Spends `used` tokens of the batch's reservation and refunds the rest (key-request-limit.ts). */
  settleBatch: (request: FastifyRequest, used: number) => Promise<void>;
  /** Test hook: the process dies right after storing a message, before publishing it. */
  crashAfterStore: boolean;
  /** The organization's smallest daily allowance: a message of more recipients could never go out. */
  recipientLimits: RecipientLimits;
}

/** The Idempotency-Key header, checked like the body's key. */
function headerKey(request: FastifyRequest): string | undefined {
  const value = request.headers['idempotency-key'];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length < 1 || value.length > 256 || !/^[\x20-\x7e]+$/.test(value)) {
    throw new ApiError(400, 'invalid_idempotency_key', 'Idempotency-Key is 1 to 256 printable ASCII characters.', [{ path: '/headers/idempotency-key', message: 'invalid' }]);
  }
  return value;
}

/** A refused cancel or reschedule, answered: 404 for no such email, 409 for one handed over (or not scheduled). */
function orChangeRefused(result: MessageChangeResult): void {
  if (result.ok) return;
  const r = result.refusal;
  switch (r.reason) {
    case 'not_found': throw notFound('email');
    case 'not_cancelable': throw new ApiError(409, r.reason, `This email ${r.why}; only an email not yet handed over can be canceled.`);
    case 'not_schedulable': throw new ApiError(409, r.reason, `This email ${r.why}; only a scheduled email not yet handed over can be rescheduled.`);
  }
}

/** A message whose idempotency key was used with another request (`at` the item of a batch): 409. */
const keyReusedError = (at = '') =>
  new ApiError(409, 'invalid_idempotent_request', 'This idempotency key was used with a different request; use a new key for a new message.', [{ path: `${at}/idempotency_key`, message: 'used with another request' }]);

/** A page of GET /emails that cannot be listed: 400 invalid_cursor, naming the parameter. */
function listRefusalError(r: ListRefusal): ApiError {
  switch (r.reason) {
    case 'both_cursors': return new ApiError(400, 'invalid_cursor', 'Pass after or before, not both.', [{ path: '/before', message: 'after is given too' }]);
    case 'unknown_cursor':
      return new ApiError(400, 'invalid_cursor', `${r.param} is not the id of an email of this list; pass the id of an item of a previous page.`, [{ path: `/${r.param}`, message: 'unknown email id' }]);
  }
}

export async function emailRoutes(app: App, deps: EmailRouteDeps): Promise<void> {
  const { domains, messages, outbox } = deps;
  const changes = new MessageChanges(messages.pg);
  const tags = ['emails'];
  addComponents(app, [SendEmailBody, BatchEmailItem, Created, BatchCreated, EmailObject, ListedEmail, EmailList, Changed, UpdateEmailBody]);

  /**
   * Refuses From domains the key may not use or the organization has not verified, and messages
   * larger than a daily allowance, by the place of the item.
   */
  async function checkSenders(grant: MailKeyGrant, items: readonly { message: PreparedMessage; at: string }[]): Promise<Map<string, ApiError>> {
    const refused = new Map<string, ApiError>();
    const [verified, limit] = await Promise.all([domains.verifiedNames(grant.organizationId), deps.recipientLimits.of(grant.organizationId)]);
    for (const { message, at } of items) {
      const refusal = fromDomainRefusal(grant, message.from.domain, verified, at) ?? overDailyLimit(message, limit, at);
      if (refusal) refused.set(at, refusal);
    }
    return refused;
  }

  const crashIfAsked = () => {
    if (deps.crashAfterStore) process.kill(process.pid, 'SIGKILL');
  };

  app.post('/emails', {
    config: { mailAccess: 'send' },
    bodyLimit: SEND_BODY_LIMIT,
    schema: {
      tags, operationId: 'sendEmail', summary: 'Send an email',
      description: 'Resend\'s request and answer. The message is stored and queued for the sender; 200 even while it waits in the queue. ' +
        'An `Idempotency-Key` header (or `idempotency_key` in the body; the header wins) makes a repeat return the original id with `Idempotent-Replayed: true` and send nothing; the same key with another request is 409 invalid_idempotent_request.',
      headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ description: '1 to 256 printable ASCII characters, unique per organization.' })) }),
      body: ref(SendEmailBody),
      response: { 200: { ...ref(Created), description: 'The message id.', headers: { ...RATE_LIMIT_HEADERS, ...REPLAY_HEADER } }, ...mailErrorResponses(...MAIL_BODY_ERRORS, 409, 422) },
    },
  }, async (request, reply) => {
    const message = prepareMessage(request.body, headerKey(request));
    refuseServiceKey(message.idempotencyKey);
    const refusal = (await checkSenders(request.mailAuth, [{ message, at: '' }])).get('');
    if (refusal) throw refusal;
    const result = await messages.store(request.mailAuth.organizationId, request.mailAuth.keyId, message);
    if (!result.ok) throw keyReusedError();
    const stored = result.stored;
    crashIfAsked();
    // Stored is durable: the answer need not wait for Kafka (the relay publishes what this process
    // could not). A replay waits, so that what it found unqueued is queued when it answers.
    if (stored.unpublished) {
      const publishing = outbox.publish([stored.id], stored.replayed);
      if (stored.replayed) await publishing;
    }
    if (stored.replayed) reply.header('idempotent-replayed', 'true');
    return { id: stored.id };
  });

  app.post('/emails/batch', {
    config: { mailAccess: 'send', mailBatch: true },
    bodyLimit: BATCH_BODY_LIMIT,
    schema: {
      tags, operationId: 'sendEmailBatch', summary: 'Send up to 100 emails',
      description: 'Resend\'s batch: a JSON array of up to 100 emails (no attachments), each with its own optional `idempotency_key`; the request\'s Idempotency-Key header is ignored. ' +
        'Costs one request per message of the key\'s per-second cap (100 reserved before the body is read, the rest refunded). ' +
        '`x-batch-validation: strict` (default) refuses the whole batch when an item is invalid; `permissive` accepts the valid items and lists the others in `errors`. ' +
        '`Idempotent-Replayed: true` when every item repeated a key.',
      headers: Type.Object({ 'x-batch-validation': Type.Optional(StringEnum(['strict', 'permissive'] as const)) }),
      body: Type.Array(ref(BatchEmailItem), { minItems: 1, maxItems: MAX_BATCH }),
      response: { 200: { ...ref(BatchCreated), description: 'The ids, in order.', headers: { ...RATE_LIMIT_HEADERS, ...REPLAY_HEADER } }, ...mailErrorResponses(...MAIL_BODY_ERRORS, 409, 422) },
    },
  }, async (request, reply) => {
    const strict = request.headers['x-batch-validation'] !== 'permissive';
    const errors: { index: number; message: string; code: string }[] = [];
    const items: { message: PreparedMessage; at: string; index: number }[] = [];
    for (const [index, input] of request.body.entries()) {
      try {
        const message = prepareMessage(input, undefined, `/${index}`);
        refuseServiceKey(message.idempotencyKey, `/${index}`);
        items.push({ message, at: `/${index}`, index });
      } catch (err) {
        if (strict || !(err instanceof ApiError)) throw err;
        errors.push({ index, message: err.message, code: err.code });
      }
    }
    const refused = await checkSenders(request.mailAuth, items);
    if (strict && refused.size > 0) throw refused.values().next().value!;
    const accepted = items.filter((item) => {
      const refusal = refused.get(item.at);
      if (refusal) errors.push({ index: item.index, message: refusal.message, code: refusal.code });
      return !refusal;
    });
    const batch = accepted.length ? await messages.storeBatch(request.mailAuth.organizationId, request.mailAuth.keyId, accepted.map((i) => i.message), strict) : { ok: true as const, results: [] };
    if (!batch.ok) throw keyReusedError(accepted[batch.index]!.at);
    const ok: Stored[] = [];
    batch.results.forEach((result, i) => {
      if (result.ok) return ok.push(result.stored);
      const refusal = keyReusedError(accepted[i]!.at);
      errors.push({ index: accepted[i]!.index, message: refusal.message, code: refusal.code });
    });
    // One token per message of the batch, whatever became of it.
    await deps.settleBatch(request, request.body.length);
    crashIfAsked();
    const replayed = ok.some((s) => s.replayed);
    const publishing = outbox.publish(ok.filter((s) => s.unpublished).map((s) => s.id), replayed);
    if (replayed) await publishing;
    if (ok.length > 0 && ok.every((s) => s.replayed)) reply.header('idempotent-replayed', 'true');
    return { data: ok.map((s) => ({ id: s.id })), ...(strict ? {} : { errors: errors.sort((a, b) => a.index - b.index) }) };
  });

  app.get('/emails/:id', {
    config: { mailAccess: 'read_emails' },
    schema: {
      tags, operationId: 'getEmail', summary: 'Get an email', description: 'Resend\'s email object, with the message\'s state as `last_event`.',
      params: IdParams,
      response: { 200: withRateLimitHeaders(EmailObject, 'The message.'), ...mailErrorResponses(...MAIL_ERRORS, 404) },
    },
  }, async (request) => {
    const row = isUuid(request.params.id) ? await messages.get(request.mailAuth.organizationId, request.params.id, request.mailAuth.domains) : undefined;
    if (!row) throw notFound('email');
    return toEmail(row);
  });

  app.get('/emails', {
    config: { mailAccess: 'read_emails' },
    schema: {
      tags, operationId: 'listEmails', summary: 'List emails',
      description: 'The organization\'s emails (of the key\'s domains, for a domain-restricted key), newest first, in Resend\'s list shape and paging: `after` (older) or `before` (newer) names an email id of a previous page; a cursor that is no email of this list is 400 invalid_cursor.',
      querystring: ListQuery,
      response: { 200: withRateLimitHeaders(EmailList, 'One page, newest first.'), ...mailErrorResponses(...MAIL_ERRORS, 400) },
    },
  }, async (request) => {
    const { limit = 20, after, before } = request.query;
    const page = await listMessages(messages.pg, { organizationId: request.mailAuth.organizationId, domains: request.mailAuth.domains, limit, after, before });
    if (!page.ok) throw listRefusalError(page.refusal);
    return { object: 'list' as const, has_more: page.more, data: page.rows.map(toListed) };
  });

  const found = (id: string) => {
    if (!isUuid(id)) throw notFound('email');
    return id;
  };

  app.post('/emails/:id/cancel', {
    config: { mailAccess: 'send' },
    schema: {
      tags, operationId: 'cancelEmail', summary: 'Cancel an email',
      description: 'Cancels an email not yet handed over (scheduled, or queued: waiting for its time, its turn, a daily allowance or a retry); it is never sent and its last_event is `canceled`. ' +
        'An email the sender holds at that moment, or already handed over (delivered, bounced, failed, suppressed, canceled), is 409 not_cancelable; the two are decided in one Postgres transaction, so exactly one wins.',
      params: IdParams,
      response: { 200: withRateLimitHeaders(Changed, 'Canceled.'), ...mailErrorResponses(...MAIL_ERRORS, 404, 409) },
    },
  }, async (request) => {
    const id = found(request.params.id);
    orChangeRefused(await changes.cancel(request.mailAuth.organizationId, id, request.mailAuth.domains));
    return { object: 'email' as const, id };
  });

  app.patch('/emails/:id', {
    config: { mailAccess: 'send' },
    schema: {
      tags, operationId: 'updateEmail', summary: 'Reschedule an email',
      description: 'Moves a scheduled email that the sender has not tried yet to a new `scheduled_at`. An email sent without scheduled_at, held by the sender, tried or handed over is 409 not_schedulable.',
      params: IdParams,
      body: ref(UpdateEmailBody),
      response: { 200: withRateLimitHeaders(Changed, 'Rescheduled.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404, 409) },
    },
  }, async (request) => {
    const id = found(request.params.id);
    orChangeRefused(await changes.reschedule(request.mailAuth.organizationId, id, request.mailAuth.domains, new Date(request.body.scheduled_at)));
    return { object: 'email' as const, id };
  });
}
