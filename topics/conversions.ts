import type { TopicDefinition } from '../src/platform/kafka/topic-definition.ts';

// Conversions and tracked clicks reported through POST /api/v1/track.
export const conversionsTopic: TopicDefinition = {
  name: 'conversions',
  partitions: 6,
  key: 'workspaceId',
  cleanupPolicy: 'delete',
  retentionMs: 7 * 24 * 3600 * 1000,
  valueSchema: 'conversion.avsc',
  description: 'Conversions and tracked clicks, keyed by workspace; at-least-once, deduplicate by conversionId.',
};
