import type { TopicDefinition } from '../src/platform/kafka/topic-definition.ts';

// Visits to a branded domain's root or to a short ID it has no link for, sent on by the domain's
// fallbacks (src/links/orphans/). A topic of its own, not `scans`: they have no link, click ID or
// visitor, and every consumer of `scans` (webhooks, scan limits, data teams) counts link scans.
export const orphanVisitsTopic: TopicDefinition = {
  name: 'orphan-visits',
  partitions: 3,
  key: 'workspaceId',
  cleanupPolicy: 'delete',
  retentionMs: 7 * 24 * 3600 * 1000,
  valueSchema: 'orphan-visit.avsc',
  description: 'Orphan visits of branded domains (base_url, invalid_short_url), keyed by workspace; at-least-once, deduplicate by visitId.',
};
