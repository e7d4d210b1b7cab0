// A test's own ClickHouse DDL on every server of CLICKHOUSE_URL: with replicas (STACK_CLICKHOUSE_REPLICAS=3,
// or a test's own), a table made on one server alone would be missing where reads go, and a database
// dropped on one would stay on the others (and in ZooKeeper). A table is made Replicated* when
// CLICKHOUSE_REPLICATED=on, as the migrations make theirs. No vitest here: the global setup uses it too.
import { clickhouseUrls, createClickHouse, type ClickHouseConfig } from '../../src/platform/clickhouse/client.ts';
import { SqlFragment } from '../../src/platform/clickhouse/literal.ts';
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
