// A test's own ClickHouse DDL on every server of CLICKHOUSE_URL: with replicas (STACK_CLICKHOUSE_REPLICAS=3,
// or a test's own), a table made on one server alone would be missing where reads go, and a database
// dropped on one would stay on the others (and in ZooKeeper). A table is made Replicated* when
// CLICKHOUSE_REPLICATED=on, as the migrations make theirs. No vitest here: the global setup uses it too.
import { clickhouseUrls, createClickHouse, type ClickHouseConfig } from '../../src/platform/clickhouse/client.ts';
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
 * With replicas, waits until every server has every part of every replicated table of `database`
 * (SYSTEM SYNC REPLICA on each): a test that wrote and then reads, from whichever replica answers,
 * needs them in step; on a single server, nothing to wait for.
 */
export async function replicasInStep(config: ClickHouseConfig & { CLICKHOUSE_REPLICATED?: string }, database = config.CLICKHOUSE_DATABASE): Promise<void> {
  const urls = clickhouseUrls(config);
  if (config.CLICKHOUSE_REPLICATED !== 'on' || urls.length < 2) return;
  for (const url of urls) {
    const ch = createClickHouse({ ...config, CLICKHOUSE_URL: url }, database);
    try {
      const tables = await ch.rows<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${database} AND startsWith(engine, 'Replicated')`);
      for (const { name } of tables) await ch.exec(sql`SYSTEM SYNC REPLICA ${ident(database)}.${ident(name)}`);
    } finally {
      await ch.close();
    }
  }
}
