// ClickHouse 18.16 mutations (ALTER TABLE … DELETE / UPDATE): asynchronous
// rewrites of every part that holds matching rows (18.16 reads every part to
// find them: no partition pruning). Heavy, so the privacy runner
// batches everything it has into one per table, and waits for them on the
// condition (system.mutations), bounded. On replicas a mutation that waits
// only on a partition's last quorum part is freed by a marker row
// (quorum-markers.ts), else it would wait until the partition's next scan.
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { ident, inStrings, sql, type SqlFragment } from '../../platform/clickhouse/literal.ts';
import { insertMarkers, stalledPartitions } from '../../platform/clickhouse/quorum-markers.ts';
import { replicationOutage } from '../../platform/clickhouse/replication-errors.ts';

/** Submits `ALTER TABLE <table> <command>`; ClickHouse answers at once, the rewrite runs after. */
export async function mutate(ch: ClickHouse, table: string, command: SqlFragment): Promise<void> {
  await ch.exec(sql`ALTER TABLE ${ident(table)} ${command}`);
}

/**
 * How often a wait looks again for mutations stalled on a last quorum part: a replica lists a new
 * mutation only once it has read it from ZooKeeper (a moment after the ALTER answered), and a quorum
 * insert in flight at the ALTER becomes a last part only later.
 */
const STALLS_EVERY_MS = 500;

/**
 * Waits until no mutation of these tables is left to do (in this database), at most `timeoutMs`. On
 * replicas, on each that serves: each applies a replicated mutation to its own parts, in its own
 * time, and until it has, reads there (analytics, exports) still find the rows it deletes; and a
 * partition whose last quorum part a mutation waits on gets a marker row, which frees it.
 */
export async function mutationsDone(ch: ClickHouse, database: string, tables: readonly string[], timeoutMs: number, intervalMs = 100): Promise<void> {
  if (tables.length === 0) return;
  const end = Date.now() + timeoutMs;
  let stallsAt = 0;
  for (;;) {
    if (database === ch.database && Date.now() >= stallsAt) {
      stallsAt = Date.now() + STALLS_EVERY_MS;
      await freeStalled(ch, tables);
    }
    const left = await ch.rowsOnEach<{ n: string }>(sql`SELECT count() AS n FROM system.mutations WHERE database = ${database} AND table IN ${inStrings([...tables])} AND is_done = 0`);
    if (left.every(([row]) => Number(row?.n ?? 0) === 0)) return;
    if (Date.now() > end) throw Object.assign(new Error(`ClickHouse mutations of ${tables.join(', ')} not done within ${timeoutMs} ms`), { retriable: true });
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * A marker row into each partition whose last quorum part a pending mutation of these tables covers.
 * A replication outage (a quorum not met now, 286 while another quorum insert into the table is in
 * flight) is left to the next look: the wait goes on meanwhile.
 */
async function freeStalled(ch: ClickHouse, tables: readonly string[]): Promise<void> {
  try {
    const stalled = await stalledPartitions(ch, tables);
    // One statement per table, the tables at once (18.16 takes one quorum insert at a time per table).
    await Promise.all([...new Set(stalled.map((s) => s.table))].map((table) => insertMarkers(ch, table, stalled.filter((s) => s.table === table).map((s) => s.partition))));
  } catch (err) {
    if (!replicationOutage(err)) throw err;
  }
}
