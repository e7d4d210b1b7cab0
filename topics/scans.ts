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

/**
 * How the consumers of scans whose cost is per batch fetch: the broker answers once it has
 * `minBytes` of scans or after `maxWaitTimeInMs`, whichever comes first. Under load batches get
 * several times larger; idle, a scan waits at most that long more.
 * - The scan sink: 1 MiB or 500 ms (ClickHouse's cost is per insert; a partition's batch is at most
 *   kafkajs's 1 MiB per partition, about 2,500 scans; about 1,800 per insert under the benchmark's load).
 * - The webhook and scan-limit kinds (a Postgres statement or transaction per batch): 256 KiB or
 *   250 ms, so a webhook or a link's closing waits little.
 */
export const SCAN_SINK_FETCH = { minBytes: 1024 * 1024, maxWaitTimeInMs: 500 };
export const SCAN_BATCH_FETCH = { minBytes: 256 * 1024, maxWaitTimeInMs: 250 };
