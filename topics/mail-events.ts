// mail.events: what happened to sent messages (delivered, bounced, complained, opened, clicked,
// unsubscribed), for data teams and the broadcast reports' readers.
import type { TopicDefinition } from '../src/platform/kafka/topic-definition.ts';

export const mailEventsTopic: TopicDefinition = {
  name: 'mail.events',
  partitions: 6,
  key: 'organization_id',
  cleanupPolicy: 'delete',
  retentionMs: 7 * 24 * 3600 * 1000,
  valueSchema: 'mail-event.avsc',
  description: 'Events of messages, contacts and broadcasts, keyed by organization; at-least-once, deduplicate by event_id.',
};
