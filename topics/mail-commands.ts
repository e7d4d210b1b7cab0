// mail.commands: work for the broadcast actor (start a fan-out, decide an A/B test), keyed
// by broadcast id so one broadcast's commands are handled in order by one actor.
import type { TopicDefinition } from '../src/platform/kafka/topic-definition.ts';

export const mailCommandsTopic: TopicDefinition = {
  name: 'mail.commands',
  partitions: 6,
  key: 'broadcast_id',
  cleanupPolicy: 'delete',
  retentionMs: 7 * 24 * 3600 * 1000,
  valueSchema: 'mail-command.avsc',
  description: 'Commands to the broadcast actor, keyed by broadcast id; at-least-once, idempotent by the broadcast\'s state.',
};
