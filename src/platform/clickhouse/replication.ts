// How a table of ours is written and read when the deployment made it
// Replicated* (over ZooKeeper), found from the table itself, so one code path
// serves a single server and replicas. On replicas:
// - an insert waits until a majority of the replicas hold it (insert_quorum), so
//   a replica lost right after cannot take the only copy with it;
// - a read that must see every finished insert (the sinks' existence check) asks
//   for sequential consistency: it is answered only by a replica holding every
//   quorum insert (others refuse: REPLICA_IS_NOT_IN_QUORUM, retried), and leaves
//   out an insert whose quorum is still pending, whose retry is then dropped by
//   block deduplication (the same rows in the same block: idempotent-sink.ts).
import type { ClickHouseSettings } from '@clickhouse/client';
import type { ClickHouse } from './client.ts';
import { sql } from './literal.ts';

/**
 * How long a quorum insert waits for the other replicas (18.16's default: 10 minutes), below the
 * client's request timeout (30 s) so the server answers UNKNOWN_STATUS_OF_INSERT (retried) rather
 * than the request being cut while the insert may still complete.
 */
export const QUORUM_TIMEOUT_MS = 20_000;

const replicasByServer = new WeakMap<ClickHouse, Map<string, Promise<number>>>();

/**
 * The table's replicas, 0 when it is not a Replicated* table; asked once per client and table.
 * `signal` bounds the look-up (a caller with a deadline must not leave a request to a hung server behind).
 * Such a caller looks up on its own unless the answer is known or being asked without a deadline: its abort
 * fails only itself, never another caller that shares the look-up. (Until the first answer, callers with a
 * deadline that come together each ask: two small system-table reads apiece, once per process and table.)
 */
export function replicasOf(ch: ClickHouse, table: string, signal?: AbortSignal): Promise<number> {
  const tables = replicasByServer.get(ch) ?? new Map<string, Promise<number>>();
  replicasByServer.set(ch, tables);
  const shared = tables.get(table); // known, or being asked
  if (shared) return signal ? untilAborted(shared, signal) : shared;
  const replicas = lookUp(ch, table, signal);
  if (signal) {
    // Only its answer is kept for the others.
    replicas.then((n) => tables.has(table) || tables.set(table, Promise.resolve(n)), () => {});
  } else {
    // A failed look-up is asked again next time.
    replicas.catch(() => tables.delete(table));
    tables.set(table, replicas);
  }
  return replicas;
}

/** `work`'s result, or a rejection with the signal's reason once it aborts (the work goes on for others). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function lookUp(ch: ClickHouse, table: string, signal?: AbortSignal): Promise<number> {
  const [row] = await ch.rows<{ engine: string }>(sql`SELECT engine FROM system.tables WHERE database = ${ch.database} AND name = ${table}`, signal ? { signal } : {});
  if (!row) throw new Error(`ClickHouse table ${ch.database}.${table} does not exist`);
  if (!row.engine.startsWith('Replicated')) return 0;
  const [status] = await ch.rows<{ total: number; expired: number }>(
    sql`SELECT total_replicas AS total, is_session_expired AS expired FROM system.replicas WHERE database = ${ch.database} AND table = ${table}`,
    signal ? { signal } : {},
  );
  // Without a ZooKeeper session the server cannot tell how many replicas there are: an outage, asked again.
  if (!status || Number(status.expired) === 1 || Number(status.total) < 1) {
    throw Object.assign(new Error(`ClickHouse replica of ${ch.database}.${table} has no ZooKeeper session`), { retriable: true });
  }
  return Number(status.total);
}

const zookeeperPaths = new WeakMap<ClickHouse, Map<string, string>>();

/** The replicated table's path in ZooKeeper (undefined for a table that is not replicated); asked once per client and table. */
export async function zookeeperPathOf(ch: ClickHouse, table: string): Promise<string | undefined> {
  const paths = zookeeperPaths.get(ch) ?? new Map<string, string>();
  zookeeperPaths.set(ch, paths);
  const known = paths.get(table);
  if (known !== undefined) return known;
  const [replica] = await ch.rows<{ path: string }>(sql`SELECT zookeeper_path AS path FROM system.replicas WHERE database = ${ch.database} AND table = ${table}`);
  if (replica) paths.set(table, replica.path);
  return replica?.path;
}

/** A majority of the replicas: with three, two; ClickHouse takes a quorum of 1 as none. */
export function quorumOf(replicas: number): number {
  return Math.floor(replicas / 2) + 1;
}

/** Settings of an insert into the table: a majority quorum on replicas, none on a single server. */
export async function insertSettings(ch: ClickHouse, table: string): Promise<ClickHouseSettings> {
  const replicas = await replicasOf(ch, table);
  return replicas > 1 ? { insert_quorum: String(quorumOf(replicas)), insert_quorum_timeout: QUORUM_TIMEOUT_MS } : {};
}

/** Settings of a read that must see every finished insert into the table. */
export async function readYourWritesSettings(ch: ClickHouse, table: string, signal?: AbortSignal): Promise<ClickHouseSettings> {
  return (await replicasOf(ch, table, signal)) > 1 ? { select_sequential_consistency: '1' } : {};
}
