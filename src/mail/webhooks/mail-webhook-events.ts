// The events a mail webhook endpoint can subscribe to, in Resend's names, and
// which mail.events type each comes from. A mail.events type with no Resend
// name (unsubscribed) is not sent to webhooks.
import { derivedEventId } from './derived-event-id.ts';

export const MAIL_WEBHOOK_EVENTS = [
  'email.sent', 'email.scheduled', 'email.delivered', 'email.delivery_delayed', 'email.bounced', 'email.complained',
  'email.opened', 'email.clicked', 'email.failed', 'email.suppressed',
  'contact.created', 'contact.updated', 'contact.deleted', 'broadcast.sent',
] as const;
export type MailWebhookEvent = (typeof MAIL_WEBHOOK_EVENTS)[number];

const FROM_MAIL_EVENT: Record<string, MailWebhookEvent> = {
  sent: 'email.sent',
  scheduled: 'email.scheduled',
  delivered: 'email.delivered',
  delivery_delayed: 'email.delivery_delayed',
  bounced: 'email.bounced',
  complained: 'email.complained',
  opened: 'email.opened',
  clicked: 'email.clicked',
  failed: 'email.failed',
  suppressed: 'email.suppressed',
  'contact.created': 'contact.created',
  'contact.updated': 'contact.updated',
  'contact.deleted': 'contact.deleted',
  'broadcast.sent': 'broadcast.sent',
};

/** The webhook event of a mail.events type, or undefined when webhooks do not carry it. */
export const webhookEventOf = (mailEventType: string): MailWebhookEvent | undefined => FROM_MAIL_EVENT[mailEventType];

/**
 * The webhook events one mail event becomes, each with its webhook-id. The relay's acceptance
 * (`delivered`) is all we learn of a hand-over, so it is both email.sent (handed over, Resend's
 * "sent") and email.delivered (the next server took it); email.sent goes under an id derived
 * from the event's, the same every time the event is read.
 */
export function webhookEventsOf(mailEventType: string, eventId: string): { type: MailWebhookEvent; id: string }[] {
  const type = webhookEventOf(mailEventType);
  if (!type) return [];
  if (mailEventType === 'delivered') return [{ type: 'email.sent', id: derivedEventId(eventId, 'email.sent') }, { type, id: eventId }];
  return [{ type, id: eventId }];
}
