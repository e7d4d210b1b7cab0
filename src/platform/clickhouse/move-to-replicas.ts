// Moves a single-server deployment's tables onto replicas, in place (docs/operations.md, "Running
// ClickHouse replicated"): the old server, given ZooKeeper and its macros, is the first of
// CLICKHOUSE_URL. Each of its MergeTree-family tables gets a Replicated* twin, filled from it
// (INSERT … SELECT; a materialized view fires on inserts into its source's name only, so no rollup
// counts twice), checked row for row, then swapped in by one RENAME; the old table stays as
// `<table>__single` until the operator drops it. The views follow the names. The twin is made on
// every replica before it is filled, and filled with a quorum insert (a majority, as the sinks
// insert): a sequentially consistent read (the sinks' existence check) sees only what was written
// with a quorum, so rows moved without one would be invisible to it and a replayed event stored
// twice. The other replicas then take the views and the rest as they are (migrate.ts, joinReplica)
// and fetch their data, which this waits for. Writers must be stopped meanwhile (the sinks: the
// scans stay in Kafka and are stored after).
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { clickhouseUrls, createClickHouse, type ClickHouse } from './client.ts';
import { ident, sql, SqlFragment } from './literal.ts';
import { migrateClickHouse, type MigrationConfig } from './migrate.ts';
import { replicatedStatement } from './replicated-engines.ts';
import { quorumOf } from './replication.ts';

export type MoveConfig = MigrationConfig & Pick<Config, 'CLICKHOUSE_REPLICATED'>;

/** The suffix the old tables keep after the swap. */
export const SINGLE_SUFFIX = '__single';
const FILLING_SUFFIX = '__replicated';
/** How long a block of the fill waits for the quorum: the other replicas fetch it first (an operator's command, not a request). */
const QUORUM_WAIT_MS = 600_000;

export interface MovedTable {
  table: string;
  rows: number;
}

export async function moveToReplicas(config: MoveConfig, log: Logger): Promise<MovedTable[]> {
  if (config.CLICKHOUSE_REPLICATED !== 'on') throw new Error('moving to replicas needs CLICKHOUSE_REPLICATED=on (and CLICKHOUSE_URL naming the replicas, the old server first)');
  const urls = clickhouseUrls(config);
  const database = config.CLICKHOUSE_DATABASE;
  const db = ident(database);
  const servers = urls.map((url) => createClickHouse({ ...config, CLICKHOUSE_URL: url }, '', 3_600_000, log));
  const first = servers[0]!;
  const moved: MovedTable[] = [];
  try {
    await first.rows(sql`SELECT count() FROM system.zookeeper WHERE path = '/'`).catch((err: unknown) => {
      throw new Error(`${urls[0]} (the old server, first in CLICKHOUSE_URL) cannot reach ZooKeeper: give it <zookeeper>, <macros> and an interserver port first (${(err as Error).message})`);
    });
    const tables = await first.rows<{ name: string }>(
      sql`SELECT name FROM system.tables WHERE database = ${database} AND match(engine, '^[A-Za-z]*MergeTree$') AND NOT startsWith(engine, 'Replicated') AND name != 'schema_migrations' AND NOT endsWith(name, ${SINGLE_SUFFIX}) AND NOT endsWith(name, ${FILLING_SUFFIX}) ORDER BY name`,
    );
    for (const server of servers.slice(1)) await server.exec(sql`CREATE DATABASE IF NOT EXISTS ${db}`);
    for (const { name } of tables) {
      moved.push({ table: name, rows: await moveTable(servers, database, name) });
      log.info({ table: `${database}.${name}`, rows: moved.at(-1)!.rows }, 'clickhouse table moved to a replicated twin');
    }
  } finally {
    await Promise.all(servers.map((server) => server.close()));
  }
  // The other replicas take the tables (none applied a migration yet) and fetch the rows.
  await migrateClickHouse(config, log);
  for (const url of urls.slice(1)) {
    const replica = createClickHouse({ ...config, CLICKHOUSE_URL: url }, '', 3_600_000, log);
    try {
      for (const { table } of moved) await replica.exec(sql`SYSTEM SYNC REPLICA ${db}.${ident(table)}`);
    } finally {
      await replica.close();
    }
  }
  return moved;
}

/**
 * One table: its twin made on every replica, filled on the first (the old server) with a quorum,
 * checked, and swapped in (on the others, which have no old table, renamed); returns its rows.
 */
async function moveTable(servers: readonly ClickHouse[], database: string, table: string): Promise<number> {
  const server = servers[0]!;
  const db = ident(database);
  const old = sql`${db}.${ident(table)}`;
  const filling = sql`${db}.${ident(table + FILLING_SUFFIX)}`;
  const [{ statement }] = (await server.rows<{ statement: string }>(sql`SHOW CREATE TABLE ${old}`)) as [{ statement: string }];
  const created = statement.replace(/^\s*CREATE\s+TABLE\s+[^\s(]+/i, `CREATE TABLE ${filling.text}`);
  // A twin left by a run that stopped half-way is made anew (dropped on every replica, it leaves ZooKeeper).
  for (const s of servers) await s.exec(sql`DROP TABLE IF EXISTS ${filling}`);
  for (const s of servers) await s.exec(new SqlFragment(replicatedStatement(created, database, table)));
  // Every block as it is, also two that happen to be alike (deduplication would keep one); each
  // block held by a majority before the next, so sequentially consistent reads see them all.
  await server.exec(sql`INSERT INTO ${filling} SELECT * FROM ${old}`, {
    settings: { insert_deduplicate: 0, insert_quorum: String(quorumOf(servers.length)), insert_quorum_timeout: QUORUM_WAIT_MS },
  });
  const count = async (t: SqlFragment) => Number((await server.rows<{ n: string }>(sql`SELECT count() AS n FROM ${t}`))[0]!.n);
  const [before, after] = [await count(old), await count(filling)];
  if (before !== after) throw new Error(`${database}.${table}: ${after} rows in its replicated twin, ${before} in it: were writers left running? Stop them and run the move again`);
  await server.exec(sql`RENAME TABLE ${old} TO ${db}.${ident(table + SINGLE_SUFFIX)}, ${filling} TO ${old}`);
  for (const s of servers.slice(1)) await s.exec(sql`RENAME TABLE ${filling} TO ${old}`);
  return after;
}
