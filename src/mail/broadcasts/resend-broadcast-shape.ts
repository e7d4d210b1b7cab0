// A broadcast in Resend's shape: `segment_id` (and `audience_id`, Resend's old
// name for it), Reply-To as a list, `sent_at` when it finished sending, its
// topic's id, and Resend's statuses: draft, scheduled, queued (sending, or in its
// A/B test), sent, canceled.
import type { BroadcastRow, BroadcastStatus } from './broadcasts.ts';

export const RESEND_BROADCAST_STATUSES = ['draft', 'scheduled', 'queued', 'sent', 'canceled'] as const;

const STATUS: Record<BroadcastStatus, (typeof RESEND_BROADCAST_STATUSES)[number]> = {
  draft: 'draft', scheduled: 'scheduled', sending: 'queued', testing: 'queued', sent: 'sent', canceled: 'canceled',
};

export const toResendBroadcastItem = (b: BroadcastRow) => ({
  object: 'broadcast' as const,
  id: b.id,
  name: b.name,
  segment_id: b.segment_id,
  audience_id: b.segment_id,
  status: STATUS[b.status],
  created_at: b.created_at.toISOString(),
  scheduled_at: b.scheduled_at?.toISOString() ?? null,
  sent_at: b.status === 'sent' ? (b.finished_at?.toISOString() ?? null) : null,
});

/** The whole broadcast; `topicId` is its topic's id (the row keeps the slug), null without one. */
export const toResendBroadcast = (b: BroadcastRow, topicId: string | null) => ({
  ...toResendBroadcastItem(b),
  from: b.from_address,
  subject: b.subject,
  reply_to: b.reply_to === null ? null : [b.reply_to],
  preview_text: b.preview_text,
  topic_id: topicId,
  html: b.html,
  text: b.text_body,
});
