// The mail-webhooks worker kind. Its consumer reads mail.events (keyed by
// organization, so an organization's events arrive in order on one partition)
// and durably queues one delivery per event and subscribed endpoint before its
// offsets are committed; an event read twice queues nothing new. The
// platform's dispatcher, beside the consumer, makes the attempts, signed with
// Standard Webhooks: the webhook-id is the event id, the same on every attempt
// and replay.
import type { ActorMessage, BatchWorkerKind } from '../../platform/actors/worker-kind.ts';
import type { Platform } from '../../platform/platform.ts';
import { standardWebhookHeaders } from '../../platform/webhooks/standard-webhooks.ts';
import { WebhookDispatcher, type DispatcherOptions } from '../../platform/webhooks/webhook-dispatcher.ts';
import { createWebhookSender, type SenderOptions } from '../../platform/webhooks/webhook-sender.ts';
import { mailEventsTopic } from '../../../topics/mail-events.ts';
import type { MailWebhookDeliveries } from './mail-webhook-deliveries.ts';
import { webhookEventsOf } from './mail-webhook-events.ts';
import { mailWebhookBody, type MailEventValue, type MessageFacts } from './mail-webhook-payload.ts';

export interface MailWebhookWorkerOptions {
  deliveries: MailWebhookDeliveries;
  sender: SenderOptions;
  dispatcher: DispatcherOptions;
}

export function mailWebhookKind(platform: Platform, options: MailWebhookWorkerOptions): BatchWorkerKind<MailEventValue> {
  const { deliveries } = options;
  const { pg } = platform;
  const dispatcher = new WebhookDispatcher(
    deliveries,
    createWebhookSender(options.sender),
    (delivery) => standardWebhookHeaders(delivery.event_id, delivery.body, delivery.secrets),
    platform.log.child({ webhooks: 'mail' }),
    options.dispatcher,
  );
  return {
    kind: 'mail-webhooks',
    topics: [mailEventsTopic],
    concurrency: 3,
    background: dispatcher,
    // Events of organizations without an enabled endpoint are not even decoded.
    select: async (messages) => {
      const keys = messages.map((m) => m.key.toLowerCase());
      const wanted = await deliveries.organizationsWithEndpoints(keys);
      return keys.map((key) => wanted.has(key));
    },
    handleBatch: async (messages: ActorMessage<MailEventValue>[]) => {
      // occurred_at arrives as epoch milliseconds (timestamp-millis without a logical type reader) or a Date.
      const events = messages.map((m) => ({ ...m.value, occurred_at: new Date(m.value.occurred_at).getTime() })).filter((e) => webhookEventsOf(e.type, e.event_id).length > 0);
      if (events.length === 0) return;
      const messageIds = [...new Set(events.map((e) => e.message_id).filter((id): id is string => !!id))];
      const { rows } = messageIds.length === 0 ? { rows: [] as MessageFacts[] } : await pg.query<MessageFacts>(
        'SELECT id, from_address, to_addresses, subject, tags, created_at FROM mail_messages WHERE id = ANY($1::uuid[])',
        [messageIds],
      );
      const byId = new Map(rows.map((r) => [r.id, r]));
      const queued = await deliveries.enqueue(events.flatMap((e) => webhookEventsOf(e.type, e.event_id).map(({ type, id }) => (
        { organizationId: e.organization_id, eventId: id, type, occurredAt: e.occurred_at, body: mailWebhookBody(type, e, e.message_id ? byId.get(e.message_id) : undefined) }
      ))));
      if (queued > 0) dispatcher.nudge();
    },
  };
}
