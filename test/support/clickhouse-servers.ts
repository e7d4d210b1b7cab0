// A test's own ClickHouse DDL on every server of CLICKHOUSE_URL: with replicas (STACK_CLICKHOUSE_REPLICAS=3,
// or a test's own), a table made on one server alone would be missing where reads go, and a database
// dropped on one would stay on the others (and in ZooKeeper). A table is made Replicated* when
// CLICKHOUSE_REPLICATED=on, as the migrations make theirs. No vitest here: the global setup uses it too.
import { clickhouseUrls, createClickHouse, type ClickHouse, type ClickHouseConfig } from '../../src/platform/clickhouse/client.ts';
import { ident, sql, SqlFragment } from '../../src/platform/clickhouse/literal.ts';
import { replicatedStatement } from '../../src/platform/clickhouse/replicated-engines.ts';

/** Runs `statement` on each server in turn; unqualified names are in `database` (the configured one unless given). */
export async function onEveryServer(config: ClickHouseConfig & { CLICKHOUSE_REPLICATED?: string }, statement: SqlFragment, database = config.CLICKHOUSE_DATABASE): Promise<void> {
  const text = config.CLICKHOUSE_REPLICATED === 'on' ? replicatedStatement(statement.text, database) : statement.text;
  for (const url of clickhouseUrls(config)) {
    // ('' for a statement on the server itself, such as DROP DATABASE of the configured one.)
    const ch = createClickHouse({ ...config, CLICKHOUSE_URL: url }, database);
    try {
      await ch.exec(new SqlFragment(text));
    } finally {
      await ch.close();
    }
  }
}

/**
 * With replicas, waits until every server has every part of every replicated table of `database`: a
 * test that wrote and then reads, from whichever replica answers, needs them in step; on a single
 * server, nothing to wait for. 18.16's SYSTEM SYNC REPLICA waits for the entries the replica has pulled
 * from the replication log, not for one it has yet to pull (a replica counted 0 right after it), so it
 * runs once the replica has pulled every entry the log held when asked.
 */
export async function replicasInStep(config: ClickHouseConfig & { CLICKHOUSE_REPLICATED?: string }, database = config.CLICKHOUSE_DATABASE): Promise<void> {
  const urls = clickhouseUrls(config);
  if (config.CLICKHOUSE_REPLICATED !== 'on' || urls.length < 2) return;
  for (const url of urls) {
    const ch = createClickHouse({ ...config, CLICKHOUSE_URL: url }, database);
    try {
      const tables = await ch.rows<{ table: string; path: string; last: string }>(sql`
        SELECT table, zookeeper_path AS path, log_max_index AS last FROM system.replicas WHERE database = ${database}`);
      for (const { table, path, last } of tables) {
        const [log] = await ch.rows<{ entries: string }>(sql`SELECT count() AS entries FROM system.zookeeper WHERE path = ${`${path}/log`}`);
        // log_max_index is 0 also when the log has no entry: nothing to pull then.
        if (Number(log?.entries ?? 0) > 0) await pulledPast(ch, url, database, table, Number(last));
        await ch.exec(sql`SYSTEM SYNC REPLICA ${ident(database)}.${ident(table)}`);
      }
    } finally {
      await ch.close();
    }
  }
}

const PULL_BOUND_MS = 30_000;

/** Waits until the replica's log_pointer (the next entry it will pull) has passed log entry `last`. */
async function pulledPast(ch: ClickHouse, url: string, database: string, table: string, last: number): Promise<void> {
  const end = Date.now() + PULL_BOUND_MS;
  for (;;) {
    const [row] = await ch.rows<{ pulledUpTo: string }>(sql`SELECT log_pointer AS pulledUpTo FROM system.replicas WHERE database = ${database} AND table = ${table}`);
    if (Number(row?.pulledUpTo ?? 0) > last) return;
    if (Date.now() > end) throw new Error(`ClickHouse ${url}: ${database}.${table} has not pulled its replication log up to entry ${last} within ${PULL_BOUND_MS} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
