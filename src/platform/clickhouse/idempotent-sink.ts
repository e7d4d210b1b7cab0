// A batch worker kind that writes a topic's events to a ClickHouse table, each
// event exactly once. The runtime commits a batch's offsets only after the
// insert returned, so a crash replays events rather than losing them; replays
// and duplicates (at-least-once delivery) are dropped here: the batch is
// deduplicated by id, then the ids already in the table are left out. The
// check and the insert run under a per-partition Postgres lock, so even two
// consumers that briefly share a partition during a rebalance cannot both
// insert an event. A holder that stops answering loses the lock after a bound
// (advisory-lock.ts), so it confirms that it still holds it before each insert.
// Readers therefore need no FINAL, and materialized views fed by these inserts
// are exact.
//
// On replicas (replication.ts) the check reads with sequential consistency and
// the insert waits for a quorum. An insert whose outcome is unknown (a server
// killed or hung under it, its quorum unconfirmed) is retried as is: the check
// leaves out rows whose quorum is pending, and the rows left are sent in the
// same blocks (sorted by id, cut at fixed sizes), which ClickHouse drops as
// duplicates of the blocks it already has (block deduplication, by a hash of
// the block's data, on whichever replica takes the retry).
// Not covered: the materialized views of such an insert. 18.16 feeds them after
// the quorum wait, and skips them for a block it deduplicates, so a server killed
// between storing a block and feeding its views leaves the block without them:
// the table holds every event once, its rollups may miss that block (seen in
// clickhouse-replica-faults.test.ts; docs/operations.md).
//
// The table's sorting key must be (<tenant column>, ts, <id column>), e.g.
// (workspace_id, ts, scan_id), so the existence check reads only the batch's
// tenants and few seconds.
import type { ActorMessage, BatchWorkerKind } from '../actors/worker-kind.ts';
import type { TopicDefinition } from '../kafka/topic-definition.ts';
import { withAdvisoryLock } from '../postgres/advisory-lock.ts';
import type { Pool } from '../postgres/pool.ts';
import type { ClickHouse } from './client.ts';
import { ident, inStrings, sql } from './literal.ts';
import { insertSettings, readYourWritesSettings } from './replication.ts';

export interface SinkEvent {
  /** Milliseconds since the epoch; stored in the table's `ts` column. */
  timestamp: number;
}

export interface IdempotentSinkOptions<E extends SinkEvent> {
  kind: string;
  topic: TopicDefinition;
  table: string;
  /** The column naming the event's tenant, first in the sorting key (e.g. workspace_id). */
  tenantColumn: string;
  tenantOf: (event: E) => string;
  idColumn: string;
  idOf: (event: E) => string;
  toRow: (event: E) => Record<string, unknown>;
  /** Rows per insert at most: ClickHouse's cost is per insert, but materialized views hold each block multiplied in memory. */
  insertChunk?: number;
  /** How full the broker's fetches are (see WorkerKind's `fetch`). */
  fetch?: BatchWorkerKind<E>['fetch'];
  /**
   * Runs with all of a batch's events (those stored before too: a replay) once they are in the
   * table, outside the partition's lock and before the batch's offsets are committed; if it fails,
   * the batch is handled again, until it succeeds.
   */
  afterStored?: (events: readonly E[]) => Promise<void>;
}

/** The events not yet in the table, each once. */
export async function newEvents<E extends SinkEvent>(clickhouse: ClickHouse, options: Pick<IdempotentSinkOptions<E>, 'table' | 'tenantColumn' | 'tenantOf' | 'idColumn' | 'idOf'>, events: readonly E[]): Promise<E[]> {
  const unique = new Map<string, E>();
  for (const e of events) if (!unique.has(options.idOf(e))) unique.set(options.idOf(e), e);
  if (unique.size === 0) return [];
  const all = [...unique.values()];
  const seconds = all.map((e) => Math.floor(e.timestamp / 1000));
  const id = ident(options.idColumn);
  const settings = await readYourWritesSettings(clickhouse, options.table);
  // The batch's ids go beside the query as a table of their own (external-values.ts).
  const present = await clickhouse.rowsWith<{ id: string }>(sql`
    SELECT ${id} AS id FROM ${ident(options.table)}
     WHERE ${ident(options.tenantColumn)} IN ${inStrings([...new Set(all.map((e) => options.tenantOf(e)))])}
       AND ts >= ${new Date(Math.min(...seconds) * 1000)} AND ts <= ${new Date(Math.max(...seconds) * 1000)}
       AND ${id} IN batch_ids`, { name: 'batch_ids', column: 'id', values: [...unique.keys()] }, { settings });
  for (const row of present) unique.delete(row.id);
  return [...unique.values()];
}

/**
 * The rows to insert as blocks: sorted by id and cut every `size` rows, so the same events always
 * make the same blocks, whatever order they came in (ClickHouse deduplicates a block by its data).
 */
export function deterministicBlocks<E>(events: readonly E[], idOf: (event: E) => string, size: number): E[][] {
  // Each id made once, not in the comparator (a sink's 20,000 events take some 600,000 comparisons).
  const sorted = events.map((event) => ({ id: idOf(event), event })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((keyed) => keyed.event);
  const blocks: E[][] = [];
  for (let i = 0; i < sorted.length; i += size) blocks.push(sorted.slice(i, i + size));
  return blocks;
}

/**
 * Runs a sink's afterStored. Its failure is retried like an outage (until it succeeds, the partition
 * waiting): the events are stored, and dead-lettering them would only lose what afterStored does.
 */
async function afterStored<E>(run: (events: readonly E[]) => Promise<void>, events: readonly E[]): Promise<void> {
  try {
    await run(events);
  } catch (err) {
    throw Object.assign(new Error(`after storing: ${(err as Error).message}`, { cause: err }), { retriable: true });
  }
}

export function idempotentSinkKind<E extends SinkEvent>(clickhouse: ClickHouse, pg: Pool, options: IdempotentSinkOptions<E>): BatchWorkerKind<E> {
  const chunk = options.insertChunk ?? 5000;
  return {
    kind: options.kind,
    topics: [options.topic],
    concurrency: 2,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    handleBatch: async (messages: ActorMessage<E>[]) => {
      const first = messages[0];
      if (!first) return;
      await withAdvisoryLock(pg, `${options.kind}:${first.topic}:${first.partition}`, async (lease) => {
        const fresh = await newEvents(clickhouse, options, messages.map((m) => m.value));
        const settings = await insertSettings(clickhouse, options.table);
        for (const block of deterministicBlocks(fresh, options.idOf, chunk)) {
          // A holder stopped since the check may have lost the lock to another, which stored these events.
          await lease.confirm();
          await clickhouse.insert(options.table, block.map(options.toRow), { settings });
        }
      });
      if (options.afterStored) await afterStored(options.afterStored, messages.map((m) => m.value));
    },
  };
}
