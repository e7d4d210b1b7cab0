// ClickHouse DDL migrations: SQL files in migrations/clickhouse, applied in name
// order, each recorded in a `schema_migrations` table (per server). ClickHouse has no
// transactions, so every statement must be idempotent (IF NOT EXISTS) and a
// half-applied file is simply run again; 18.16 has no ADD COLUMN IF NOT EXISTS,
// so an ADD COLUMN whose column is there is passed over (columnAdded). With CLICKHOUSE_REPLICATED=on, on every
// replica of CLICKHOUSE_URL, with Replicated* engines (migrateReplicas).
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { clickhouseUrls, createClickHouse, type ClickHouse, type ClickHouseConfig } from './client.ts';
import { ident, sql, SqlFragment } from './literal.ts';
import { replicatedStatement } from './replicated-engines.ts';
import { quorumOf } from './replication.ts';

export const CLICKHOUSE_MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/clickhouse', import.meta.url));

/** Splits a migration file into statements: `;` at the end of a line ends one; `--` lines are comments. */
export function splitStatements(text: string): string[] {
  const withoutComments = text
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n');
  return withoutComments
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export type MigrationConfig = ClickHouseConfig & Partial<Pick<Config, 'CLICKHOUSE_REPLICATED'>>;

export async function migrateClickHouse(config: MigrationConfig, log: Logger, dir = CLICKHOUSE_MIGRATIONS_DIR): Promise<void> {
  if (config.CLICKHOUSE_REPLICATED === 'on') return migrateReplicas(config, log, dir);
  // A migration may backfill a table from millions of rows: minutes, not the queries' 30 s.
  const server = createClickHouse(config, '', 3_600_000, log);
  const db = ident(config.CLICKHOUSE_DATABASE);
  try {
    const done = await applied(server, db);
    for (const file of await migrationFiles(dir)) {
      if (done.has(file)) continue;
      for (const statement of await statementsOf(dir, file, db)) {
        if (await columnAdded(server, config.CLICKHOUSE_DATABASE, statement)) continue;
        await server.exec(new SqlFragment(statement));
      }
      await server.exec(sql`INSERT INTO ${db}.schema_migrations (name) VALUES (${file})`);
      log.info({ migration: file }, 'clickhouse migration applied');
    }
  } finally {
    await server.close();
  }
}

/** Creates the database and its record of applied migrations, and returns that record. */
async function applied(server: ClickHouse, db: SqlFragment): Promise<Set<string>> {
  await server.exec(sql`CREATE DATABASE IF NOT EXISTS ${db}`);
  // Each server's own record (a plain MergeTree, also among replicas): a migration runs once per server.
  await server.exec(sql`CREATE TABLE IF NOT EXISTS ${db}.schema_migrations (name String, applied_at DateTime DEFAULT now()) ENGINE = MergeTree ORDER BY name`);
  return new Set((await server.rows<{ name: string }>(sql`SELECT name FROM ${db}.schema_migrations`)).map((r) => r.name));
}

const migrationFiles = async (dir: string): Promise<string[]> => (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();

/** A file's statements, `{db}` naming the configured database (migration files are our own code, not input). */
async function statementsOf(dir: string, file: string, db: SqlFragment): Promise<string[]> {
  return splitStatements(await readFile(`${dir}/${file}`, 'utf8')).map((statement) => statement.replaceAll('{db}', db.text));
}

/**
 * The replicas of CLICKHOUSE_URL, every one of which must answer, in step: each statement runs on
 * every server before the next (a table dropped and made anew is gone from ZooKeeper before it is
 * made again), tables Replicated* (replicated-engines.ts). A statement that writes data or changes a
 * replicated table (INSERT, ALTER) runs on the first server alone, since replication brings it to the
 * others, and the next waits until they have it. A server with no migration applied while others have
 * some is a replica added later: it cannot replay the old migrations (ZooKeeper holds today's
 * structure), so it takes the tables and views of the one furthest on, as they are now (joinReplica).
 * While a replica does not answer, a process still starts when those that do have every migration.
 */
async function migrateReplicas(config: MigrationConfig, log: Logger, dir: string): Promise<void> {
  const urls = clickhouseUrls(config);
  const servers = urls.map((url) => createClickHouse({ ...config, CLICKHOUSE_URL: url }, '', 3_600_000, log));
  const database = config.CLICKHOUSE_DATABASE;
  const db = ident(database);
  try {
    const reached = await Promise.all(servers.map((server) => applied(server, db).catch((err: unknown) => err as Error)));
    const down = reached.flatMap((r, i) => (r instanceof Error ? [`${urls[i]} (${r.message})`] : []));
    if (down.length > 0) {
      // A process may start while a replica is down, as long as no migration waits for it.
      const files = await migrationFiles(dir);
      const upToDate = reached.every((r) => r instanceof Error || files.every((file) => r.has(file)));
      if (upToDate) {
        log.warn({ down }, 'clickhouse: every migration is applied on the replicas that answer; not checked on those that do not');
        return;
      }
      throw new Error(`ClickHouse migrations to apply, and replicas that do not answer: ${down.join(', ')}; every replica must answer to take them`);
    }
    const done = reached as Set<string>[];
    const furthest = done.reduce((best, d, i) => (d.size > done[best]!.size ? i : best), 0);
    for (const [i, server] of servers.entries()) {
      if (done[i]!.size > 0 || done[furthest]!.size === 0) continue;
      await joinReplica(servers[furthest]!, server, database);
      done[i] = new Set(done[furthest]);
      log.info({ server: urls[i], from: urls[furthest] }, 'clickhouse replica took the tables of another');
    }
    for (const file of await migrationFiles(dir)) {
      // A file some servers lack was cut short (its statements ran everywhere in step, its record
      // not): it runs again whole, as on a single server.
      if (done.every((d) => d.has(file))) continue;
      for (const statement of await statementsOf(dir, file, db)) {
        const replicated = replicatedStatement(statement, database);
        // (Replicated, an added column is on every replica once the first has it: replicatedEverywhere.)
        if (await columnAdded(servers[0]!, database, replicated)) continue;
        if (/^\s*(INSERT|ALTER)\b/i.test(replicated)) {
          // An INSERT (a backfill) with a majority quorum, as the sinks insert: a sequentially consistent
          // read does not see a plain insert made after a partition's last quorum insert.
          const quorum = /^\s*INSERT\b/i.test(replicated) ? { settings: { insert_quorum: String(quorumOf(servers.length)) } } : {};
          await servers[0]!.exec(new SqlFragment(replicated), quorum);
          await replicatedEverywhere(servers, replicated, database);
        } else {
          for (const server of servers) await server.exec(new SqlFragment(replicated));
        }
      }
      for (const [i, server] of servers.entries()) if (!done[i]!.has(file)) await server.exec(sql`INSERT INTO ${db}.schema_migrations (name) VALUES (${file})`);
      log.info({ migration: file, servers: urls.length }, 'clickhouse migration applied');
    }
  } finally {
    await Promise.all(servers.map((server) => server.close()));
  }
}

/** ALTER TABLE [db.]table ADD COLUMN name … (one change alone): the table and the column. */
const ADD_COLUMN = /^\s*ALTER\s+TABLE\s+(?:`?\w+`?\.)?`?(\w+)`?\s+ADD\s+COLUMN\s+`?(\w+)`?(?![\s\S]*,\s*(?:ADD|DROP|MODIFY|CLEAR|COMMENT)\b)/i;

/** Whether the statement adds one column that the table already has (a file cut short after it, run again). */
async function columnAdded(server: ClickHouse, database: string, statement: string): Promise<boolean> {
  const added = ADD_COLUMN.exec(statement);
  if (!added) return false;
  const [, table, column] = added;
  return (await server.rows(sql`SELECT name FROM system.columns WHERE database = ${database} AND table = ${table!} AND name = ${column!}`)).length > 0;
}

/** The table an INSERT or ALTER statement writes to. */
const TARGET = /^\s*(?:INSERT\s+INTO|ALTER\s+TABLE)\s+(?:`?\w+`?\.)?`?(\w+)`?/i;

/**
 * Waits until the other servers have what the first did: an INSERT's rows (SYSTEM SYNC REPLICA), an
 * ALTER's columns (ZooKeeper brings a replicated ALTER to each replica on its own, a moment later).
 */
async function replicatedEverywhere(servers: readonly ClickHouse[], statement: string, database: string): Promise<void> {
  const table = TARGET.exec(statement)?.[1];
  if (!table) return;
  const t = sql`${ident(database)}.${ident(table)}`;
  if (/^\s*INSERT\b/i.test(statement)) {
    for (const server of servers.slice(1)) await server.exec(sql`SYSTEM SYNC REPLICA ${t}`);
    return;
  }
  const columnsOf = async (server: ClickHouse) =>
    JSON.stringify(await server.rows(sql`SELECT name, type, default_kind, default_expression FROM system.columns WHERE database = ${database} AND table = ${table} ORDER BY name`));
  const want = await columnsOf(servers[0]!);
  for (const server of servers.slice(1)) {
    const end = Date.now() + 120_000;
    while ((await columnsOf(server)) !== want) {
      if (Date.now() > end) throw new Error(`ClickHouse: ${database}.${table} on a replica did not take the change within 120 s: ${statement.slice(0, 200)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/**
 * A replica added later takes the database's tables, then its views, as they are on `from` (SHOW
 * CREATE: the same ZooKeeper paths, so it fetches their data from the others), and its record of
 * applied migrations.
 */
export async function joinReplica(from: ClickHouse, to: ClickHouse, database: string): Promise<void> {
  const db = ident(database);
  const objects = await from.rows<{ name: string; engine: string }>(
    // (Not the old tables a move to replicas kept: move-to-replicas.ts.)
    sql`SELECT name, engine FROM system.tables WHERE database = ${database} AND name != 'schema_migrations' AND name NOT LIKE '.inner.%' AND NOT endsWith(name, '__single') ORDER BY endsWith(engine, 'View'), name`,
  );
  const present = new Set((await to.rows<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${database}`)).map((r) => r.name));
  for (const { name } of objects) {
    if (present.has(name)) continue;
    const [{ statement }] = (await from.rows<{ statement: string }>(sql`SHOW CREATE TABLE ${db}.${ident(name)}`)) as [{ statement: string }];
    await to.exec(new SqlFragment(statement));
  }
  const names = (await from.rows<{ name: string }>(sql`SELECT name FROM ${db}.schema_migrations`)).map((r) => r.name);
  if (names.length > 0) await to.insert(`${database}.schema_migrations`, names.map((name) => ({ name })));
}
