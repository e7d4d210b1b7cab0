// POST /emails, POST /emails/batch, GET /emails/:id, GET /emails (the list),
// POST /emails/:id/cancel and PATCH /emails/:id (reschedule), in Resend's shapes
// (the `resend` SDK is a client). A message is stored with its idempotency key,
// then published to mail.messages (message-outbox.ts); the answer is 200 even when
// the publication waits for the relay. Rules: README "Sending".
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { RATE_LIMIT_HEADERS, withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import { RESEND_BODY_ERRORS, RESEND_ERRORS, resendErrorResponses } from '../resend/resend-errors.ts';
import { IdParams } from '../http/mail-schemas.ts';
import { BatchCreated, Changed, Created, EmailList, EmailObject, ListedEmail } from './email-answers.ts';
import { cancelEmail, checkSenders, crashIfAsked, getEmail, listEmails, rescheduleEmail, sendEmail, type EmailOperationDeps } from './email-operations.ts';
import { keyReusedError } from './email-refusals.ts';
import { BatchEmailItem, ListEmailsQuery, SendEmailBody, UpdateEmailBody } from './email-schemas.ts';
import { prepareSend } from './email-template.ts';
import { MessageChanges } from './message-changes.ts';
import type { Stored } from './messages.ts';
import { prepareMessage, refuseServiceKey, sendTimeOrRefused, type PreparedMessage } from './prepare-message.ts';

export const MAX_BATCH = 100;
/** Bodies up to this size: 40 MB of attachments in base64, and the parts. */
export const SEND_BODY_LIMIT = 60 * 1024 * 1024;
export const BATCH_BODY_LIMIT = 50 * 1024 * 1024;

const REPLAY_HEADER = { 'idempotent-replayed': Type.Literal('true', { description: 'Present on a repeat of an idempotency key: the id is the original message\'s, nothing new was sent.' }) };

export interface EmailRouteDeps extends Omit<EmailOperationDeps, 'changes'> {
  /** Spends `used` tokens of the batch's reservation and refunds the rest (key-request-limit.ts). */
  settleBatch: (request: FastifyRequest, used: number) => Promise<void>;
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

export async function emailRoutes(app: App, deps: EmailRouteDeps): Promise<void> {
  const operations = { ...deps, changes: new MessageChanges(deps.messages.pg) };
  const tags = ['emails'];
  addComponents(app, [SendEmailBody, BatchEmailItem, Created, BatchCreated, EmailObject, ListedEmail, EmailList, Changed, UpdateEmailBody]);

  app.post('/emails', {
    config: { mailAccess: 'send' },
    bodyLimit: SEND_BODY_LIMIT,
    schema: {
      tags, operationId: 'sendEmail', summary: 'Send an email',
      description: 'Resend\'s request and answer. The message is stored and queued for the sender; 200 even while it waits in the queue. ' +
        'An `Idempotency-Key` header (or `idempotency_key` in the body; the header wins) makes a repeat return the original id with `Idempotent-Replayed: true` and send nothing; the same key with another request is 409 invalid_idempotent_request.',
      headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ description: '1 to 256 printable ASCII characters, unique per organization.' })) }),
      body: ref(SendEmailBody),
      response: { 200: { ...ref(Created), description: 'The message id.', headers: { ...RATE_LIMIT_HEADERS, ...REPLAY_HEADER } }, ...resendErrorResponses(...RESEND_BODY_ERRORS, 409, 422) },
    },
  }, async (request, reply) => {
    const { id, replayed } = await sendEmail(operations, request.mailAuth, request.body, headerKey(request));
    if (replayed) reply.header('idempotent-replayed', 'true');
    return { id };
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
      response: { 200: { ...ref(BatchCreated), description: 'The ids, in order.', headers: { ...RATE_LIMIT_HEADERS, ...REPLAY_HEADER } }, ...resendErrorResponses(...RESEND_BODY_ERRORS, 409, 422) },
    },
  }, async (request, reply) => {
    const strict = request.headers['x-batch-validation'] !== 'permissive';
    const errors: { index: number; message: string; code: string }[] = [];
    const items: { message: PreparedMessage; at: string; index: number }[] = [];
    for (const [index, input] of request.body.entries()) {
      try {
        const message = await prepareSend(deps.templates, request.mailAuth.organizationId, input, undefined, `/${index}`);
        refuseServiceKey(message.idempotencyKey, `/${index}`);
        items.push({ message, at: `/${index}`, index });
      } catch (err) {
        if (strict || !(err instanceof ApiError)) throw err;
        errors.push({ index, message: err.message, code: err.code });
      }
    }
    const refused = await checkSenders(deps, request.mailAuth, items);
    if (strict && refused.size > 0) throw refused.values().next().value!;
    const accepted = items.filter((item) => {
      const refusal = refused.get(item.at);
      if (refusal) errors.push({ index: item.index, message: refusal.message, code: refusal.code });
      return !refusal;
    });
    const batch = accepted.length ? await deps.messages.storeBatch(request.mailAuth.organizationId, request.mailAuth.keyId, accepted.map((i) => i.message), strict) : { ok: true as const, results: [] };
    if (!batch.ok) throw keyReusedError(accepted[batch.index]!.at);
    const ok: Stored[] = [];
    batch.results.forEach((result, i) => {
      if (result.ok) return ok.push(result.stored);
      const refusal = keyReusedError(accepted[i]!.at);
      errors.push({ index: accepted[i]!.index, message: refusal.message, code: refusal.code });
    });
    // One token per message of the batch, whatever became of it.
    await deps.settleBatch(request, request.body.length);
    crashIfAsked(deps);
    const replayed = ok.some((s) => s.replayed);
    const publishing = deps.outbox.publish(ok.filter((s) => s.unpublished).map((s) => s.id), replayed);
    if (replayed) await publishing;
    if (ok.length > 0 && ok.every((s) => s.replayed)) reply.header('idempotent-replayed', 'true');
    return { data: ok.map((s) => ({ id: s.id })), ...(strict ? {} : { errors: errors.sort((a, b) => a.index - b.index) }) };
  });

  // Resend's SDK calls these (emails.metrics, emails.receiving.list); not offered here. Without a route they
  // would be taken as an email id and answer "email not found": they answer what any path without a
  // route answers, route_not_found (Resend's name not_found), for every kind of key.
  for (const part of ['metrics', 'receiving']) {
    app.get(`/emails/${part}`, {
      config: { mailAccess: 'reports' },
      schema: {
        tags, operationId: `${part}NotOffered`, summary: `Not offered: GET /emails/${part} (Resend's emails.${part === 'metrics' ? 'metrics' : 'receiving.list'})`,
        description: 'Answers 404 route_not_found, as a path without a route (Resend\'s name not_found).',
        response: resendErrorResponses(...RESEND_ERRORS, 404),
      },
    }, async (request) => {
      throw new ApiError(404, 'route_not_found', `No route for GET ${request.url.split('?')[0]}.`);
    });
  }

  app.get('/emails/:id', {
    config: { mailAccess: 'read_emails' },
    schema: {
      tags, operationId: 'getEmail', summary: 'Get an email', description: 'Resend\'s email object, with the message\'s state as `last_event`.',
      params: IdParams,
      response: { 200: withRateLimitHeaders(EmailObject, 'The message.'), ...resendErrorResponses(...RESEND_ERRORS, 404) },
    },
  }, async (request) => getEmail(deps.messages, request.mailAuth, request.params.id));

  app.get('/emails', {
    config: { mailAccess: 'read_emails' },
    schema: {
      tags, operationId: 'listEmails', summary: 'List emails',
      description: 'The organization\'s emails (of the key\'s domains, for a domain-restricted key), newest first, in Resend\'s list shape and paging: `after` (older) or `before` (newer) names an email id of a previous page; a cursor that is no email of this list is 400 invalid_cursor.',
      querystring: ListEmailsQuery,
      response: { 200: withRateLimitHeaders(EmailList, 'One page, newest first.'), ...resendErrorResponses(...RESEND_ERRORS, 400) },
    },
  }, async (request) => listEmails(deps.messages, request.mailAuth, request.query));

  app.post('/emails/:id/cancel', {
    config: { mailAccess: 'send' },
    schema: {
      tags, operationId: 'cancelEmail', summary: 'Cancel an email',
      description: 'Cancels an email not yet handed over (scheduled, or queued: waiting for its time, its turn, a daily allowance or a retry); it is never sent and its last_event is `canceled`. ' +
        'An email the sender holds at that moment, or already handed over (delivered, bounced, failed, suppressed, canceled), is 409 not_cancelable; the two are decided in one Postgres transaction, so exactly one wins.',
      params: IdParams,
      response: { 200: withRateLimitHeaders(Changed, 'Canceled.'), ...resendErrorResponses(...RESEND_ERRORS, 404, 409) },
    },
  }, async (request) => cancelEmail(operations.changes, request.mailAuth, request.params.id));

  app.patch('/emails/:id', {
    config: { mailAccess: 'send' },
    schema: {
      tags, operationId: 'updateEmail', summary: 'Reschedule an email',
      description: 'Moves a scheduled email that the sender has not tried yet to a new `scheduled_at`. An email sent without scheduled_at, held by the sender, tried or handed over is 409 not_schedulable.',
      params: IdParams,
      body: ref(UpdateEmailBody),
      response: { 200: withRateLimitHeaders(Changed, 'Rescheduled.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404, 409) },
    },
  }, async (request) => rescheduleEmail(operations.changes, request.mailAuth, request.params.id, sendTimeOrRefused(request.body.scheduled_at, '/scheduled_at')));
}
