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

const MiB = 1024 * 1024;

/**
 * How the consumers of scans whose cost is per batch fetch: the broker answers once it has
 * `minBytes` of scans or after `maxWaitTimeInMs`, whichever comes first. Under load batches get
 * several times larger; idle, a scan waits at most that long more.
 * - The scan sink: 4 MiB or 500 ms. ClickHouse's cost is per insert (a part of the table and of each
 *   rollup): its CPU per scan stored was 13-21 µs at 2,000 scans an insert and 9-15 µs at 7,500-10,000.
 *   A partition's batch is at most 4 MiB (about 10,000 scans; kafkajs's default is 1 MiB), and a fetch
 *   at most 24 MiB, so a backlog on all six partitions is fetched from each, not only the first few.
 *   A scan still waits at most 500 ms more; at moderate rates (a few MiB a second) a fetch now waits
 *   the 500 ms instead of returning at 1 MiB.
 * - The webhook kind (a Postgres statement per batch): 256 KiB or 250 ms, so a webhook waits little.
 */
export const SCAN_SINK_FETCH = { minBytes: 4 * MiB, maxBytesPerPartition: 4 * MiB, maxBytes: 24 * MiB, maxWaitTimeInMs: 500 };
export const SCAN_BATCH_FETCH = { minBytes: 256 * 1024, maxWaitTimeInMs: 250 };
