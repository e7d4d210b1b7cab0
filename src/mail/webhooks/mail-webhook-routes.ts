// Resend's /webhooks, so that `resend.webhooks.*` works against this service:
// endpoints (create, list, get, update, remove, rotate the signing secret) and
// their delivery log (events, one event, its attempts, replay). FULL keys only.
import { Type } from '@sinclair/typebox';
import { notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { MAIL_BODY_ERRORS, MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import type { MailWebhookDeliveries } from './mail-webhook-deliveries.ts';
import { MAIL_WEBHOOK_EVENTS } from './mail-webhook-events.ts';
import type { MailWebhookLog } from './mail-webhook-log.ts';
import { toWebhook, type MailWebhookStore } from './mail-webhook-store.ts';
import { webhookOrRefused } from './mail-webhook-refusals.ts';

const Endpoint = Type.String({ minLength: 1, maxLength: 2048, pattern: '^[^\\s\\u0000-\\u001f\\u007f]+$', description: 'HTTPS URL that receives the events; must reach a public address.' });
const Events = Type.Array(StringEnum(MAIL_WEBHOOK_EVENTS), { minItems: 1, maxItems: MAIL_WEBHOOK_EVENTS.length * 2, description: 'The events the endpoint receives.' });
const Status = StringEnum(['enabled', 'disabled'] as const);
const WebhookShape = {
  object: Type.Literal('webhook'), id: Type.String(), endpoint: Type.String(), events: Type.Array(Type.String()), status: Type.String(), created_at: Type.String({ format: 'date-time' }),
};
const Webhook = Type.Object(WebhookShape);
const WithSecret = Type.Object({ ...WebhookShape, signing_secret: Type.String({ description: 'whsec_…: verifies the webhook-signature header (Standard Webhooks).' }) });
const Ref = Type.Object({ object: Type.String(), id: Type.String() });
const Page = (item: ReturnType<typeof Type.Object>) => Type.Object({ object: Type.Literal('list'), has_more: Type.Boolean(), data: Type.Array(item) });
const ListQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })), after: Type.Optional(Type.String({ maxLength: 100, description: 'The id of the last item of the previous page.' })) },
  { additionalProperties: false },
);
const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });
const EventParams = Type.Object({ id: Type.String({ maxLength: 100 }), eventId: Type.String({ maxLength: 100 }) });
const EventSummary = Type.Object({ id: Type.String(), type: Type.String(), created_at: Type.String({ format: 'date-time' }), status: StringEnum(['success', 'pending', 'failed', 'attempting'] as const) });
const EventDetail = Type.Object({
  object: Type.Literal('webhook_event'), id: Type.String(), type: Type.String(), created_at: Type.String({ format: 'date-time' }), status: Type.String(),
  next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]), payload: Type.Unknown({ description: 'The body sent: { type, created_at, data }.' }),
});
const Attempt = Type.Object({
  id: Type.String(), http_status_code: Type.Union([Type.Integer(), Type.Null()]), response: Type.String(), sent_at: Type.String({ format: 'date-time' }),
  finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]), outcome: Type.Union([Type.String(), Type.Null()]),
});

export async function mailWebhookRoutes(app: App, deps: { store: MailWebhookStore; log: MailWebhookLog; deliveries: MailWebhookDeliveries; pg: Pool }): Promise<void> {
  const { store, log, deliveries, pg } = deps;
  const tags = ['mail-webhooks'];
  const config = { mailAccess: 'manage' as const };

  const endpointOf = async (organizationId: string, id: string) => {
    const row = isUuid(id) ? await store.get(organizationId, id) : undefined;
    if (!row) throw notFound('webhook');
    return row;
  };

  app.post('/webhooks', {
    config,
    schema: {
      tags, operationId: 'createMailWebhook', summary: 'Create a webhook',
      description: 'The endpoint receives the named events of the organization from now on, signed with Standard Webhooks. The response holds the signing secret (GET /webhooks/:id shows it too).',
      body: Type.Object({ endpoint: Endpoint, events: Events }, { additionalProperties: false }),
      response: { 201: withRateLimitHeaders(Type.Object({ object: Type.Literal('webhook'), id: Type.String(), signing_secret: Type.String() }), 'Created.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    const row = webhookOrRefused(await store.create(request.mailAuth.organizationId, request.body));
    return reply.status(201).send({ object: 'webhook', id: row.id, signing_secret: row.secret });
  });

  app.get('/webhooks', {
    config,
    schema: { tags, operationId: 'listMailWebhooks', summary: 'List webhooks', querystring: ListQuery, response: { 200: withRateLimitHeaders(Page(Webhook), 'Newest first.'), ...mailErrorResponses(...MAIL_ERRORS, 400) } },
  }, async (request) => {
    const limit = request.query.limit ?? 20;
    const after = request.query.after && isUuid(request.query.after) ? request.query.after : null;
    const { rows } = await pg.query(
      `SELECT * FROM mail_webhook_endpoints w WHERE organization_id = $1
          AND ($2::uuid IS NULL OR (created_at, id) < (SELECT created_at, id FROM mail_webhook_endpoints WHERE organization_id = $1 AND id = $2::uuid))
        ORDER BY created_at DESC, id DESC LIMIT $3`,
      [request.mailAuth.organizationId, after, limit + 1],
    );
    return { object: 'list' as const, has_more: rows.length > limit, data: rows.slice(0, limit).map(toWebhook) };
  });

  app.get('/webhooks/:id', {
    config,
    schema: { tags, operationId: 'getMailWebhook', summary: 'Get a webhook (with its signing secret)', params: Params, response: { 200: withRateLimitHeaders(WithSecret, 'The webhook.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const row = await endpointOf(request.mailAuth.organizationId, request.params.id);
    return { ...toWebhook(row), signing_secret: row.secret };
  });

  app.patch('/webhooks/:id', {
    config,
    schema: {
      tags, operationId: 'updateMailWebhook', summary: 'Change a webhook\'s endpoint, events or status',
      description: 'A disabled webhook gets no new deliveries; those already queued still go.',
      params: Params,
      body: Type.Object({ endpoint: Type.Optional(Endpoint), events: Type.Optional(Events), status: Type.Optional(Status) }, { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(Ref, 'Updated.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    await endpointOf(request.mailAuth.organizationId, request.params.id);
    const row = webhookOrRefused(await store.update(request.mailAuth.organizationId, request.params.id, request.body ?? {}));
    if (!row) throw notFound('webhook');
    return { object: 'webhook', id: row.id };
  });

  app.delete('/webhooks/:id', {
    config,
    schema: {
      tags, operationId: 'removeMailWebhook', summary: 'Remove a webhook', description: 'Removes it with its delivery log; queued deliveries are not sent.', params: Params,
      response: { 200: withRateLimitHeaders(Type.Object({ object: Type.Literal('webhook'), id: Type.String(), deleted: Type.Boolean() }), 'Removed.'), ...mailErrorResponses(...MAIL_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await endpointOf(request.mailAuth.organizationId, request.params.id);
    if (!(await store.remove(request.mailAuth.organizationId, row.id))) throw notFound('webhook');
    return { object: 'webhook' as const, id: row.id, deleted: true };
  });

  app.post('/webhooks/:id/signing-secret/rotate', {
    config,
    schema: {
      tags, operationId: 'rotateMailWebhookSecret', summary: 'Rotate the signing secret',
      description: 'A new secret, answered now. Until previous_secret_expires_at (WEBHOOK_SECRET_GRACE_MS, default 24 h) requests carry a second v1 signature made with the old one.',
      params: Params,
      response: { 200: withRateLimitHeaders(Type.Object({ object: Type.Literal('webhook'), id: Type.String(), signing_secret: Type.String(), previous_secret_expires_at: Type.Union([Type.String(), Type.Null()]) }), 'Rotated.'), ...mailErrorResponses(...MAIL_ERRORS, 404) },
    },
  }, async (request) => {
    await endpointOf(request.mailAuth.organizationId, request.params.id);
    const row = await store.rotateSecret(request.mailAuth.organizationId, request.params.id);
    if (!row) throw notFound('webhook');
    return { object: 'webhook', id: row.id, signing_secret: row.secret, previous_secret_expires_at: row.previous_secret_expires_at?.toISOString() ?? null };
  });

  app.get('/webhooks/:id/events', {
    config,
    schema: { tags, operationId: 'listMailWebhookEvents', summary: 'The events sent to a webhook (its delivery log)', params: Params, querystring: ListQuery, response: { 200: withRateLimitHeaders(Page(EventSummary), 'Newest first.'), ...mailErrorResponses(...MAIL_ERRORS, 400, 404) } },
  }, async (request) => {
    const row = await endpointOf(request.mailAuth.organizationId, request.params.id);
    const after = request.query.after && isUuid(request.query.after) ? request.query.after : undefined;
    return log.events(row.id, { limit: request.query.limit, after });
  });

  const eventOf = async (organizationId: string, id: string, eventId: string) => {
    const row = await endpointOf(organizationId, id);
    if (!isUuid(eventId)) throw notFound('webhook event');
    return row;
  };

  app.get('/webhooks/:id/events/:eventId', {
    config,
    schema: { tags, operationId: 'getMailWebhookEvent', summary: 'One event sent to a webhook, with its payload', params: EventParams, response: { 200: withRateLimitHeaders(EventDetail, 'The event.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const row = await eventOf(request.mailAuth.organizationId, request.params.id, request.params.eventId);
    const event = await log.event(row.id, request.params.eventId);
    if (!event) throw notFound('webhook event');
    return event;
  });

  app.get('/webhooks/:id/events/:eventId/attempts', {
    config,
    schema: { tags, operationId: 'listMailWebhookEventAttempts', summary: 'The attempts at delivering an event', params: EventParams, querystring: ListQuery, response: { 200: withRateLimitHeaders(Page(Attempt), 'Newest first.'), ...mailErrorResponses(...MAIL_ERRORS, 400, 404) } },
  }, async (request) => {
    const row = await eventOf(request.mailAuth.organizationId, request.params.id, request.params.eventId);
    const attempts = await log.attempts(row.id, request.params.eventId, request.query);
    if (!attempts) throw notFound('webhook event');
    return attempts;
  });

  app.post('/webhooks/:id/events/:eventId/replay', {
    config,
    schema: {
      tags, operationId: 'replayMailWebhookEvent', summary: 'Send an event again',
      description: 'Queues the event again for this webhook: the same body and webhook-id, a fresh budget of attempts.',
      params: EventParams,
      response: { 202: withRateLimitHeaders(Ref, 'Queued.'), ...mailErrorResponses(...MAIL_ERRORS, 404) },
    },
  }, async (request, reply) => {
    const row = await eventOf(request.mailAuth.organizationId, request.params.id, request.params.eventId);
    if (!(await deliveries.replay(row.id, request.params.eventId))) throw notFound('webhook event');
    return reply.status(202).send({ object: 'webhook_event', id: request.params.eventId });
  });
}
