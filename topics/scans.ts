import type { TopicDefinition } from '../src/platform/kafka/topic-definition.ts';

// Every scan of a short link, published after the redirect answered.
export const scansTopic: TopicDefinition = {
  name: 'scans',
  partitions: 6,
  key: 'workspaceId',
  cleanupPolicy: 'delete',
  retentionMs: 7 * 24 * 3600 * 1000,
  valueSchema: 'scan.avsc',
  description: 'Scans of short links, keyed by workspace; at-least-once, deduplicate by scanId.',
};
