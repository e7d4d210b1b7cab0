import type { TopicDefinition } from '../src/platform/kafka/topic-definition.ts';

// Messages accepted for sending; the sender consumes them per organization.
export const mailMessagesTopic: TopicDefinition = {
  name: 'mail.messages',
  partitions: 6,
  key: 'organization_id',
  cleanupPolicy: 'delete',
  retentionMs: 7 * 24 * 3600 * 1000,
  // A message carries its html and text, 2 MB each at most (spec), with its addresses and headers.
  maxMessageBytes: 16 * 1024 * 1024,
  valueSchema: 'mail-message.avsc',
  description: 'Messages accepted for sending, keyed by organization; at-least-once, deduplicate by message_id.',
};
