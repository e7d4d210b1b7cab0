// REST routes of webhook endpoints (registration, secret rotation) and their
// delivery log (list, one delivery with its attempts, manual redelivery).
import { Type } from '@sinclair/typebox';
import { notFound } from '../../platform/http/errors.ts';
import { addComponents, ref } from '../../platform/http/components.ts';
import { API_BODY_ERRORS, API_ERRORS, errorResponses, withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import { Uuid } from '../../platform/http/schema-types.ts';
import type { DeliveryQueue } from './delivery-queue.ts';
import type { DeliveryLog } from './delivery-log.ts';
import { CreateWebhookBody, UpdateWebhookBody, Delivery, DeliveryDetail, DeliveryList, DeliveryListQuery, WEBHOOK_COMPONENTS, WebhookEndpoint, WebhookEndpointList, WebhookEndpointWithSecret } from './webhook-schemas.ts';
import { toEndpoint, type WebhookStore } from './webhook-store.ts';
import { webhookRefusalError } from './webhook-refusals.ts';

const EndpointParams = Type.Object({ id: Uuid({ description: 'Webhook endpoint id.' }) });
const DeliveryParams = Type.Object({ id: Uuid({ description: 'Webhook endpoint id.' }), deliveryId: Uuid() });

export async function webhookRoutes(app: App, deps: { store: WebhookStore; log: DeliveryLog; queue: DeliveryQueue }): Promise<void> {
  const tags = ['webhooks'];
  const { store } = deps;
  addComponents(app, WEBHOOK_COMPONENTS);

  const endpointOf = async (workspaceId: string, id: string) => {
    const row = await store.get(workspaceId, id);
    if (!row) throw notFound('webhook endpoint');
    return row;
  };

  app.post('/webhooks', {
    schema: {
      tags, operationId: 'createWebhookEndpoint', summary: 'Register a webhook endpoint',
      description: 'The endpoint receives the events it names (`events`, default `["scan.created"]`) from now on: `scan.created` for every scan of the workspace, `link.created`, `link.updated` and `link.deleted` for every change of its links. The URL must be HTTPS and public. The response holds the signing secret; it is not shown again. At most 10 endpoints per workspace.',
      body: ref(CreateWebhookBody),
      response: { 201: withRateLimitHeaders(WebhookEndpointWithSecret, 'The endpoint, with its secret.'), ...errorResponses(...API_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    const created = await store.create(request.linksAuth.workspaceId, request.body);
    if (!created.ok) throw webhookRefusalError(created.refusal);
    const { row, secret } = created;
    return reply.status(201).send({ ...toEndpoint(row), secret });
  });

  app.get('/webhooks', {
    schema: { tags, operationId: 'listWebhookEndpoints', summary: 'List webhook endpoints', response: { 200: withRateLimitHeaders(WebhookEndpointList, 'All endpoints, oldest first.'), ...errorResponses(...API_ERRORS) } },
  }, async (request) => ({ object: 'list' as const, data: (await store.list(request.linksAuth.workspaceId)).map(toEndpoint) }));

  app.get('/webhooks/:id', {
    schema: { tags, operationId: 'getWebhookEndpoint', summary: 'Get a webhook endpoint', params: EndpointParams, response: { 200: withRateLimitHeaders(WebhookEndpoint, 'The endpoint.'), ...errorResponses(...API_ERRORS, 404) } },
  }, async (request) => toEndpoint(await endpointOf(request.linksAuth.workspaceId, request.params.id)));

  app.patch('/webhooks/:id', {
    schema: {
      tags, operationId: 'updateWebhookEndpoint', summary: 'Change a webhook endpoint',
      description: 'Changes its description or the events it receives (from now on).',
      params: EndpointParams, body: ref(UpdateWebhookBody),
      response: { 200: withRateLimitHeaders(WebhookEndpoint, 'The endpoint.'), ...errorResponses(...API_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await store.update(request.linksAuth.workspaceId, request.params.id, request.body);
    if (!row) throw notFound('webhook endpoint');
    return toEndpoint(row);
  });

  app.delete('/webhooks/:id', {
    schema: { tags, operationId: 'deleteWebhookEndpoint', summary: 'Delete a webhook endpoint', description: 'Deletes it with its delivery log; queued deliveries are not sent.', params: EndpointParams, response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses(...API_ERRORS, 404) } },
  }, async (request, reply) => {
    if (!(await store.delete(request.linksAuth.workspaceId, request.params.id))) throw notFound('webhook endpoint');
    return reply.status(204).send(null);
  });

  app.post('/webhooks/:id/rotate-secret', {
    schema: {
      tags, operationId: 'rotateWebhookSecret', summary: 'Rotate the signing secret',
      description: 'Returns the new secret (shown only now). Until `previousSecretExpiresAt` (WEBHOOK_SECRET_GRACE_MS, default 24 hours) each request carries a second `v1` signature made with the old secret.',
      params: EndpointParams,
      response: { 200: withRateLimitHeaders(WebhookEndpointWithSecret, 'The endpoint, with its new secret.'), ...errorResponses(...API_ERRORS, 404) },
    },
  }, async (request) => {
    const rotated = await store.rotateSecret(request.linksAuth.workspaceId, request.params.id);
    if (!rotated) throw notFound('webhook endpoint');
    return { ...toEndpoint(rotated.row), secret: rotated.secret };
  });

  app.get('/webhooks/:id/deliveries', {
    schema: {
      tags, operationId: 'listWebhookDeliveries', summary: 'Delivery log of an endpoint', description: 'Newest first; filter by state.',
      params: EndpointParams, querystring: DeliveryListQuery,
      response: { 200: withRateLimitHeaders(DeliveryList, 'A page of deliveries.'), ...errorResponses(...API_ERRORS, 404) },
    },
  }, async (request) => {
    const endpoint = await endpointOf(request.linksAuth.workspaceId, request.params.id);
    return deps.log.list(endpoint.id, request.query);
  });

  app.get('/webhooks/:id/deliveries/:deliveryId', {
    schema: { tags, operationId: 'getWebhookDelivery', summary: 'One delivery with its payload and attempts', params: DeliveryParams, response: { 200: withRateLimitHeaders(DeliveryDetail, 'The delivery.'), ...errorResponses(...API_ERRORS, 404) } },
  }, async (request) => {
    const endpoint = await endpointOf(request.linksAuth.workspaceId, request.params.id);
    const delivery = await deps.log.get(endpoint.id, request.params.deliveryId);
    if (!delivery) throw notFound('delivery');
    return delivery;
  });

  app.post('/webhooks/:id/deliveries/:deliveryId/redeliver', {
    schema: {
      tags, operationId: 'redeliverWebhookDelivery', summary: 'Send an event again',
      description: 'Queues a new delivery of the same event (same body and scanId) with a fresh budget of 5 attempts; the original keeps its history.',
      params: DeliveryParams,
      response: { 202: withRateLimitHeaders(Delivery, 'The new, queued delivery.'), ...errorResponses(...API_ERRORS, 404) },
    },
  }, async (request, reply) => {
    const endpoint = await endpointOf(request.linksAuth.workspaceId, request.params.id);
    // Read in the insert's transaction: the answer is the delivery as queued, whatever a dispatcher does next.
    const created = await deps.queue.redeliverAndRead(endpoint.id, request.params.deliveryId, (db, id) => deps.log.get(endpoint.id, id, db));
    if (!created) throw notFound('delivery');
    const { attemptLog: _attempts, payload: _payload, ...delivery } = created;
    return reply.status(202).send(delivery);
  });
}
