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
 * - The scan sink: 8 MiB or 1 s. ClickHouse's cost is mostly per insert (a part of the table and of
 *   each rollup, and the merges each part causes: about 45 ms for the table alone): the table alone
 *   cost 31-49 µs a scan at 2,000 scans an insert, 8-13 at 10,000 and 5-6 at 50,000 (issue 34).
 *   A partition's batch is at most 8 MiB (about 20,000 scans; kafkajs's default is 1 MiB), and a fetch
 *   at most 48 MiB, so a backlog on all six partitions is fetched from each, not only the first few.
 *   A scan waits at most 1 s more, within the 2 s the scan-freshness benchmark holds analytics to.
 * - The webhook kind (a Postgres statement, an offset commit and a fetch per batch): 2 MiB or
 *   250 ms, so a webhook waits at most 250 ms more whatever the load; under load its batches are
 *   some 5,000 scans, not 600 (at 256 KiB: about 35 batches a second at 20,000 scans a second). A
 *   partition's fetch may bring 8 MiB, so one busy partition fills it.
 */
export const SCAN_SINK_FETCH = { minBytes: 8 * MiB, maxBytesPerPartition: 8 * MiB, maxBytes: 48 * MiB, maxWaitTimeInMs: 1000 };
export const SCAN_BATCH_FETCH = { minBytes: 2 * MiB, maxBytesPerPartition: 8 * MiB, maxWaitTimeInMs: 250 };
