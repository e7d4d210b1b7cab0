// Drops a test's Postgres and ClickHouse databases (no vitest here: the global setup uses it too).
import pg from 'pg';
import type { ClickHouseConfig } from '../../src/platform/clickhouse/client.ts';
import { ident, sql } from '../../src/platform/clickhouse/literal.ts';
import { databaseUrlFor } from '../../src/platform/postgres/pool.ts';
import { onEveryServer } from './clickhouse-servers.ts';

/** How long sessions that are closing get before they are terminated. */
const CLOSING_MS = 2000;

/** Drops the Postgres and ClickHouse databases of this name, on the servers `config` names. */
export async function dropDatabases(config: ClickHouseConfig & { DATABASE_URL: string }, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: databaseUrlFor(config.DATABASE_URL, 'postgres') });
  await admin.connect();
  // A pool's end() resolves before its sockets have closed: a session still closing when FORCE
  // terminates it answers its client with 57P01, an uncaught error in the test that just ended it.
  // Such sessions are waited for (briefly); FORCE is for those of processes that are gone or stuck.
  for (const end = Date.now() + CLOSING_MS; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
    if (rows[0]!.n === 0) break;
  }
  await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  await admin.end();
  await onEveryServer(config, sql`DROP DATABASE IF EXISTS ${ident(name)}`, '');
}

/** Drops the databases test files made for themselves (own-databases.ts) in runs killed before their teardown. */
export async function dropLeftoverFileDatabases(config: ClickHouseConfig & { DATABASE_URL: string }): Promise<void> {
  const admin = new pg.Client({ connectionString: databaseUrlFor(config.DATABASE_URL, 'postgres') });
  await admin.connect();
  const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'linkmail\\_own\\_%'`);
  await admin.end();
  for (const { datname } of rows) await dropDatabases(config, datname);
}
