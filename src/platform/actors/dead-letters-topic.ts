import type { TopicDefinition } from '../kafka/topic-definition.ts';

// Messages a worker could not handle after its retries, with the error; never dropped silently.
export const deadLettersTopic: TopicDefinition = {
  name: 'dead-letters',
  partitions: 3,
  key: 'the original message key',
  cleanupPolicy: 'delete',
  retentionMs: 30 * 24 * 3600 * 1000,
  valueSchema: 'dead-letter.avsc',
  description: 'Messages that a worker kind failed to handle after all retries, with the original bytes and the error.',
};
