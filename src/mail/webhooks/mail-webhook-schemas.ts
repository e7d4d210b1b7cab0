// The TypeBox schemas of mail webhooks (Resend's /webhooks): the endpoint as answered,
// its delivery log, and the bodies and answers of mail-webhook-routes.ts.
import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../platform/http/schema-types.ts';
import { MAIL_WEBHOOK_EVENTS } from './mail-webhook-events.ts';

export const Endpoint = Type.String({ minLength: 1, maxLength: 2048, pattern: '^[^\\s\\u0000-\\u001f\\u007f]+$', description: 'HTTPS URL that receives the events; must reach a public address.' });
export const Events = Type.Array(StringEnum(MAIL_WEBHOOK_EVENTS), { minItems: 1, maxItems: MAIL_WEBHOOK_EVENTS.length * 2, description: 'The events the endpoint receives.' });
export const Status = StringEnum(['enabled', 'disabled'] as const);
export const WebhookShape = {
  object: Type.Literal('webhook'), id: Type.String(), endpoint: Type.String(), events: Type.Array(Type.String()), status: Type.String(), created_at: Type.String({ format: 'date-time' }),
};
export const Webhook = Type.Object(WebhookShape);
export const WithSecret = Type.Object({ ...WebhookShape, signing_secret: Type.String({ description: 'whsec_…: verifies the webhook-signature header (Standard Webhooks).' }) });
export const Ref = Type.Object({ object: Type.String(), id: Type.String() });
export const Page = (item: ReturnType<typeof Type.Object>) => Type.Object({ object: Type.Literal('list'), has_more: Type.Boolean(), data: Type.Array(item) });
export const ListQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })), after: Type.Optional(Type.String({ maxLength: 100, description: 'The id of the last item of the previous page.' })) },
  { additionalProperties: false },
);
export const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });
export const EventParams = Type.Object({ id: Type.String({ maxLength: 100 }), eventId: Type.String({ maxLength: 100 }) });
export const EventSummary = Type.Object({ id: Type.String(), type: Type.String(), created_at: Type.String({ format: 'date-time' }), status: StringEnum(['success', 'pending', 'failed', 'attempting'] as const) });
export const EventDetail = Type.Object({
  object: Type.Literal('webhook_event'), id: Type.String(), type: Type.String(), created_at: Type.String({ format: 'date-time' }), status: Type.String(),
  next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]), payload: Type.Unknown({ description: 'The body sent: { type, created_at, data }.' }),
});
export const Attempt = Type.Object({
  id: Type.String(), http_status_code: Type.Union([Type.Integer(), Type.Null()]), response: Type.String(), sent_at: Type.String({ format: 'date-time' }),
  finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]), outcome: Type.Union([Type.String(), Type.Null()]),
});

export const CreateWebhookBody = Type.Object({ endpoint: Endpoint, events: Events }, { additionalProperties: false });
export const CreatedWebhook = Type.Object({ object: Type.Literal('webhook'), id: Type.String(), signing_secret: Type.String() });
export const UpdateWebhookBody = Type.Object({ endpoint: Type.Optional(Endpoint), events: Type.Optional(Events), status: Type.Optional(Status) }, { additionalProperties: false });
export const RemovedWebhook = Type.Object({ object: Type.Literal('webhook'), id: Type.String(), deleted: Type.Boolean() });
export const RotatedWebhook = Type.Object({ object: Type.Literal('webhook'), id: Type.String(), signing_secret: Type.String(), previous_secret_expires_at: Type.Union([Type.String(), Type.Null()]) });
