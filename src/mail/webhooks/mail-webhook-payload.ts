// The body of a mail webhook request, in Resend's shape: { type, created_at, data }.
// Email events carry the message (email_id, from, to, subject, created_at, tags)
// and their details (bounce, click, failure); contact and broadcast events carry
// the snapshot recorded with the event (its `data`).

/** A mail.events value (schemas/mail-event.avsc). */
export interface MailEventValue {
  event_id: string;
  organization_id: string;
  message_id: string | null;
  type: string;
  recipient: string | null;
  url: string | null;
  detail: string | null;
  occurred_at: number;
  data?: string | null;
}

/** What the payload needs of the message an email event is about. */
export interface MessageFacts {
  id: string;
  from_address: string;
  to_addresses: string[];
  subject: string;
  tags: { name: string; value: string }[];
  created_at: Date;
}

const parsed = (json: string | null | undefined): Record<string, unknown> => {
  if (!json) return {};
  try {
    const value = JSON.parse(json) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

function emailDetails(event: MailEventValue): Record<string, unknown> {
  const at = new Date(event.occurred_at).toISOString();
  const extra = parsed(event.data);
  switch (event.type) {
    case 'bounced':
      return { bounce: { message: event.detail ?? '', subType: 'General', type: event.recipient ? 'Permanent' : 'Undetermined' } };
    case 'clicked':
      return { click: { ipAddress: String(extra.ip ?? ''), link: event.url ?? '', timestamp: at, userAgent: String(extra.user_agent ?? '') } };
    case 'failed':
      return { failed: { reason: event.detail ?? '' } };
    case 'suppressed':
      return { suppressed: { message: event.detail ?? '', type: 'OnAccountSuppressionList' } };
    default:
      return {};
  }
}

export function mailWebhookBody(type: string, event: MailEventValue, message: MessageFacts | undefined): string {
  const createdAt = new Date(event.occurred_at).toISOString();
  if (!type.startsWith('email.')) return JSON.stringify({ type, created_at: createdAt, data: parsed(event.data) });
  return JSON.stringify({
    type,
    created_at: createdAt,
    data: {
      email_id: event.message_id,
      created_at: (message?.created_at ?? new Date(event.occurred_at)).toISOString(),
      from: message?.from_address ?? '',
      to: message?.to_addresses ?? (event.recipient ? [event.recipient] : []),
      subject: message?.subject ?? '',
      ...(message && message.tags.length > 0 ? { tags: Object.fromEntries(message.tags.map((t) => [t.name, t.value])) } : {}),
      ...(event.recipient && event.type !== 'clicked' && event.type !== 'opened' ? { recipient: event.recipient } : {}),
      ...emailDetails(event),
    },
  });
}
