// A batch worker kind that writes a topic's events to a ClickHouse table, each
// event exactly once. The runtime commits a batch's offsets only after the
// insert returned, so a crash replays events rather than losing them; replays
// and duplicates (at-least-once delivery) are dropped here: the batch is
// deduplicated by id, then the ids already in the table are left out. The
// check and the insert run under a per-partition Postgres lock, so even two
// consumers that briefly share a partition during a rebalance cannot both
// insert an event. A holder that stops answering loses the lock after a bound
// (advisory-lock.ts), so it confirms that it still holds it before each insert, and the insert
// is sent, and ended, only while that confirm is recent enough to rule out another holder.
// Readers therefore need no FINAL, and materialized views fed by these inserts
// are exact.
//
// On replicas (replication.ts) the check reads with sequential consistency and
// the insert waits for a quorum. The rows are sent in deterministic blocks
// (sorted by id, cut at fixed sizes), and a block whose insert failed with its
// outcome unknown (a server killed or hung under it, its quorum unconfirmed) is
// sent again as it was when the batch is handled again, not cut anew from what
// the check leaves: ClickHouse drops it where it is stored already (block
// deduplication, by a hash of the block's data, on whichever replica takes it)
// and stores it where it is not. After such a retry, a replica that still holds
// the first try's part although its quorum was marked failed (so the retry was
// stored anew) has that part detached (failed-quorum-parts.ts).
// A table with materialized views (scans and its rollups) is written through a
// Null input table whose views store each block in the table and in every
// rollup (`inputTable`; migration 009): a server killed between those targets
// leaves some with the block and some without, and only the same block sent
// again into the input fills the others (each Replicated target deduplicates by
// itself). The table's own view comes last, so rows the check finds in the
// table are in every rollup: the block is passed over only when the table has
// all of its rows; with some (a block cut across two months' partitions) it is
// still sent whole.
// Not covered: a worker that stops while its insert's outcome is unknown (the
// block it would have sent again is in its memory only); the batch replayed by
// another may be cut into other blocks, counted again by the rollups that had
// the first (docs/operations.md, Known gaps).
//
// The table's sorting key must be (<tenant column>, ts, <id column>), e.g.
// (workspace_id, ts, scan_id), so the existence check reads only the batch's
// tenants and few seconds.
import type { ActorMessage, BatchWorkerKind } from '../actors/worker-kind.ts';
import type { TopicDefinition } from '../kafka/topic-definition.ts';
import { withAdvisoryLock } from '../postgres/advisory-lock.ts';
import type { Pool } from '../postgres/pool.ts';
import type { ClickHouse } from './client.ts';
import { removeOrphanedQuorumParts } from './failed-quorum-parts.ts';
import { ident, inStrings, sql } from './literal.ts';
import { insertSettings, readYourWritesSettings } from './replication.ts';
import type { Column } from './row-binary.ts';

export interface SinkEvent {
  /** Milliseconds since the epoch; stored in the table's `ts` column. */
  timestamp: number;
}

export interface IdempotentSinkOptions<E extends SinkEvent> {
  kind: string;
  topic: TopicDefinition;
  table: string;
  /**
   * Where inserts go, when not `table`: a Null table whose materialized views store each block in
   * `table` and in its rollups (see above). The check still reads `table`.
   */
  inputTable?: string;
  /** The column naming the event's tenant, first in the sorting key (e.g. workspace_id). */
  tenantColumn: string;
  tenantOf: (event: E) => string;
  idColumn: string;
  idOf: (event: E) => string;
  /** The table's columns and how an event gives each (inserted as RowBinary: row-binary.ts). */
  columns: readonly Column<E>[];
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
  for (const e of events) {
    const id = options.idOf(e);
    if (!unique.has(id)) unique.set(id, e);
  }
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
  return blocksOf(sorted, size);
}

/** The events cut every `size`, in their order. */
function blocksOf<E>(events: readonly E[], size: number): E[][] {
  const blocks: E[][] = [];
  for (let i = 0; i < events.length; i += size) blocks.push(events.slice(i, i + size));
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
  const into = options.inputTable ?? options.table;
  // On replicas, per partition: the block whose insert failed, its outcome unknown, to be sent again
  // as it was when the runtime hands the batch over again.
  const unsettled = new Map<string, E[]>();
  return {
    kind: options.kind,
    topics: [options.topic],
    concurrency: 2,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    handleBatch: async (messages: ActorMessage<E>[]) => {
      const first = messages[0];
      if (!first) return;
      const partition = `${options.kind}:${first.topic}:${first.partition}`;
      await withAdvisoryLock(pg, partition, async (lease) => {
        const settings = await insertSettings(clickhouse, options.table);
        const replicated = 'insert_quorum' in settings;
        const send = async (block: E[]) => {
          try {
            // A holder stopped since the check may have lost the lock to another, which stored these
            // events; one stopped after this confirm, before its insert's last byte, has the insert cut
            // inside its last row (Lease.assertHeld as its fence).
            await lease.confirm();
            await clickhouse.insertRowBinary(into, options.columns, block, { settings, fence: lease.assertHeld });
          } catch (err) {
            // A single server deduplicates no block: there the check decides again.
            if (replicated) unsettled.set(partition, block);
            throw err;
          }
        };
        const again = unsettled.get(partition);
        let fresh = await newEvents(clickhouse, options, messages.map((m) => m.value));
        // (Kept until the check answered: a check that fails leaves the block to the next try.)
        unsettled.delete(partition);
        // The same events handed over again (the runtime's retry): their block as it was, unless the
        // table has every one of its rows, which are then in every rollup too (the table's view comes
        // last), stored by that insert or by another holder of the partition meanwhile.
        if (again) {
          const ids = new Set(messages.map((m) => options.idOf(m.value)));
          const missing = new Set(fresh.map((e) => options.idOf(e)));
          if (again.every((e) => ids.has(options.idOf(e))) && again.some((e) => missing.has(options.idOf(e)))) {
            await send(again);
            const sent = new Set(again.map((e) => options.idOf(e)));
            fresh = fresh.filter((e) => !sent.has(options.idOf(e)));
          }
        }
        // A single server deduplicates no block, so its blocks need not be the same each time: they are
        // cut in the events' order (sorting 20,000 ids cost 10-25 ms a batch, ~1 µs a scan).
        for (const block of replicated ? deterministicBlocks(fresh, options.idOf, chunk) : blocksOf(fresh, chunk)) await send(block);
        // After an insert whose outcome was unknown, a replica may still hold its first part although
        // another marked that part's quorum failed, beside the part the retry stored: rows counted
        // twice there until it is detached (failed-quorum-parts.ts). A repair that fails is tried again
        // with the batch.
        if (again) {
          try {
            await removeOrphanedQuorumParts(clickhouse);
          } catch (err) {
            unsettled.set(partition, again);
            throw err;
          }
        }
      });
      if (options.afterStored) await afterStored(options.afterStored, messages.map((m) => m.value));
    },
  };
}
