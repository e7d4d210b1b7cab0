// JSON shapes of webhook endpoints and their delivery log.
import { Type, type Static } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { StringEnum, Uuid } from '../../platform/http/schema-types.ts';

export const WEBHOOK_EVENTS = ['scan.created', 'link.created', 'link.updated', 'link.deleted', 'conversion.created'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
/** What an endpoint receives when it names no events: what every endpoint received before link events existed. */
export const DEFAULT_WEBHOOK_EVENTS: WebhookEvent[] = ['scan.created'];

const Events = Type.Array(StringEnum(WEBHOOK_EVENTS), {
  minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true,
  description: 'The events the endpoint receives: `scan.created` (every scan), `link.created`, `link.updated`, `link.deleted` (every change of a link of the workspace; a soft delete, or deactivation, is `link.deleted`), `conversion.created` (every conversion and tracked click recorded by POST /api/v1/track). Default `["scan.created"]`.',
});
import { DELIVERY_STATES, type DeliveryState } from '../../platform/webhooks/webhook-deliveries.ts';

export { DELIVERY_STATES, type DeliveryState };

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, pattern: '^[^\\s\\u0000-\\u001f\\u007f]+$', description: 'HTTPS URL that receives the events; must reach a public address. No white space or control characters.' }),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    events: Type.Optional(Events),
  },
  { $id: 'CreateWebhookEndpoint', additionalProperties: false, title: 'CreateWebhookEndpoint' },
);
export type CreateWebhookInput = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    events: Type.Optional(Events),
  },
  { $id: 'UpdateWebhookEndpoint', additionalProperties: false, minProperties: 1, title: 'UpdateWebhookEndpoint', description: 'Fields to change; the URL and secret stay.' },
);
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

export const WebhookEndpoint = Type.Object(
  {
    object: Type.Literal('webhook_endpoint'),
    id: Uuid(),
    url: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    events: Type.Array(StringEnum(WEBHOOK_EVENTS), { description: 'The events the endpoint receives.' }),
    secretHint: Type.String({ description: 'The first characters of the current secret, to tell secrets apart.' }),
    previousSecretExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Until then, requests are also signed with the secret before the last rotation.' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'WebhookEndpoint', title: 'WebhookEndpoint' },
);
export type WebhookEndpointType = Static<typeof WebhookEndpoint>;

export const WebhookEndpointWithSecret = Type.Intersect(
  [ref(WebhookEndpoint), Type.Object({ secret: Type.String({ description: 'Shown only now: store it to verify signatures.' }) })],
  { $id: 'WebhookEndpointWithSecret', title: 'WebhookEndpointWithSecret' },
);

export const WebhookEndpointList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ref(WebhookEndpoint)) }, { $id: 'WebhookEndpointList', title: 'WebhookEndpointList' });

export const Delivery = Type.Object(
  {
    object: Type.Literal('webhook_delivery'),
    id: Uuid(),
    endpointId: Uuid(),
    eventType: StringEnum(WEBHOOK_EVENTS),
    scanId: Uuid({ description: 'The idempotency key of the event: the scan\'s id for scan.created, the event\'s id (eventId) for link events.' }),
    eventId: Uuid({ description: 'The idempotency key of the event (the same value as scanId, under a name that fits every event).' }),
    state: StringEnum(DELIVERY_STATES, { description: 'queued → attempted → acknowledged (2xx) | permanently_rejected (4xx) | retried (failure, fewer than 5 attempts) | stopped (5 attempts failed).' }),
    attempts: Type.Integer(),
    lastStatusCode: Type.Union([Type.Integer(), Type.Null()]),
    nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    redeliveryOf: Type.Union([Uuid(), Type.Null()], { description: 'The delivery this one manually redelivers.' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'WebhookDelivery', title: 'WebhookDelivery' },
);

export const Attempt = Type.Object({
  attempt: Type.Integer(),
  startedAt: Type.String({ format: 'date-time' }),
  finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  statusCode: Type.Union([Type.Integer(), Type.Null()]),
  outcome: Type.Union([StringEnum(['acknowledged', 'rejected', 'failed', 'interrupted'] as const), Type.Null()], { description: 'null while in flight.' }),
  error: Type.Union([Type.String(), Type.Null()]),
}, { $id: 'WebhookDeliveryAttempt', title: 'WebhookDeliveryAttempt', description: 'One attempt to send a delivery.' });

export const DeliveryDetail = Type.Intersect([
  ref(Delivery),
  Type.Object({ payload: Type.Unknown({ description: 'The JSON body sent (the same bytes on every attempt).' }), attemptLog: Type.Array(ref(Attempt)) }),
], { $id: 'WebhookDeliveryDetail', title: 'WebhookDeliveryDetail' });

export const DeliveryList = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(ref(Delivery)), nextCursor: Type.Union([Type.String(), Type.Null()]) },
  { $id: 'WebhookDeliveryList', title: 'WebhookDeliveryList' },
);

export const DeliveryListQuery = Type.Object(
  {
    state: Type.Optional(StringEnum(DELIVERY_STATES)),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

/** The named schemas of webhooks, registered with the webhook routes. */
export const WEBHOOK_COMPONENTS = [CreateWebhookBody, UpdateWebhookBody, WebhookEndpoint, WebhookEndpointWithSecret, WebhookEndpointList, Delivery, Attempt, DeliveryDetail, DeliveryList];
