// Resend's /webhooks, so that `resend.webhooks.*` works against this service:
// endpoints (create, list, get, update, remove, rotate the signing secret) and
// their delivery log (events, one event, its attempts, replay). FULL keys without a
// domain restriction only: an endpoint receives the mail of every domain of the
// organization (and contact.* events bound to none), so a domain-restricted key that
// could read or re-point one would read the other domains' mail (403 domain_restricted_key).
import { notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { RESEND_BODY_ERRORS, RESEND_ERRORS, resendErrorResponses } from '../resend/resend-errors.ts';
import type { MailWebhookDeliveries } from './mail-webhook-deliveries.ts';
import type { MailWebhookLog } from './mail-webhook-log.ts';
import { toWebhook, type MailWebhookStore } from './mail-webhook-store.ts';
import { Attempt, CreateWebhookBody, CreatedWebhook, EventDetail, EventParams, EventSummary, ListQuery, Page, Params, Ref, RemovedWebhook, RotatedWebhook, UpdateWebhookBody, Webhook, WithSecret } from './mail-webhook-schemas.ts';
import { webhookOrRefused } from './mail-webhook-refusals.ts';

export async function mailWebhookRoutes(app: App, deps: { store: MailWebhookStore; log: MailWebhookLog; deliveries: MailWebhookDeliveries; pg: Pool }): Promise<void> {
  const { store, log, deliveries, pg } = deps;
  const tags = ['mail-webhooks'];
  const config = { mailAccess: 'manage' as const, wholeOrganization: true as const };

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
      body: CreateWebhookBody,
      response: { 201: withRateLimitHeaders(CreatedWebhook, 'Created.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    const row = webhookOrRefused(await store.create(request.mailAuth.organizationId, request.body));
    return reply.status(201).send({ object: 'webhook', id: row.id, signing_secret: row.secret });
  });

  app.get('/webhooks', {
    config,
    schema: { tags, operationId: 'listMailWebhooks', summary: 'List webhooks', querystring: ListQuery, response: { 200: withRateLimitHeaders(Page(Webhook), 'Newest first.'), ...resendErrorResponses(...RESEND_ERRORS, 400) } },
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
    schema: { tags, operationId: 'getMailWebhook', summary: 'Get a webhook (with its signing secret)', params: Params, response: { 200: withRateLimitHeaders(WithSecret, 'The webhook.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
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
      body: UpdateWebhookBody,
      response: { 200: withRateLimitHeaders(Ref, 'Updated.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404) },
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
      response: { 200: withRateLimitHeaders(RemovedWebhook, 'Removed.'), ...resendErrorResponses(...RESEND_ERRORS, 404) },
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
      response: { 200: withRateLimitHeaders(RotatedWebhook, 'Rotated.'), ...resendErrorResponses(...RESEND_ERRORS, 404) },
    },
  }, async (request) => {
    await endpointOf(request.mailAuth.organizationId, request.params.id);
    const row = await store.rotateSecret(request.mailAuth.organizationId, request.params.id);
    if (!row) throw notFound('webhook');
    return { object: 'webhook', id: row.id, signing_secret: row.secret, previous_secret_expires_at: row.previous_secret_expires_at?.toISOString() ?? null };
  });

  app.get('/webhooks/:id/events', {
    config,
    schema: { tags, operationId: 'listMailWebhookEvents', summary: 'The events sent to a webhook (its delivery log)', params: Params, querystring: ListQuery, response: { 200: withRateLimitHeaders(Page(EventSummary), 'Newest first.'), ...resendErrorResponses(...RESEND_ERRORS, 400, 404) } },
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
    schema: { tags, operationId: 'getMailWebhookEvent', summary: 'One event sent to a webhook, with its payload', params: EventParams, response: { 200: withRateLimitHeaders(EventDetail, 'The event.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const row = await eventOf(request.mailAuth.organizationId, request.params.id, request.params.eventId);
    const event = await log.event(row.id, request.params.eventId);
    if (!event) throw notFound('webhook event');
    return event;
  });

  app.get('/webhooks/:id/events/:eventId/attempts', {
    config,
    schema: { tags, operationId: 'listMailWebhookEventAttempts', summary: 'The attempts at delivering an event', params: EventParams, querystring: ListQuery, response: { 200: withRateLimitHeaders(Page(Attempt), 'Newest first.'), ...resendErrorResponses(...RESEND_ERRORS, 400, 404) } },
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
      response: { 202: withRateLimitHeaders(Ref, 'Queued.'), ...resendErrorResponses(...RESEND_ERRORS, 404) },
    },
  }, async (request, reply) => {
    const row = await eventOf(request.mailAuth.organizationId, request.params.id, request.params.eventId);
    if (!(await deliveries.replay(row.id, request.params.eventId))) throw notFound('webhook event');
    return reply.status(202).send({ object: 'webhook_event', id: request.params.eventId });
  });
}
