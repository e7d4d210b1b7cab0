// ClickHouse DDL migrations: SQL files in migrations/clickhouse, applied in name
// order, each recorded in a `schema_migrations` table. ClickHouse has no
// transactions, so every statement must be idempotent (IF NOT EXISTS) and a
// half-applied file is simply run again.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../logger.ts';
import { createClickHouse, type ClickHouseConfig } from './client.ts';
import { ident, sql, SqlFragment } from './literal.ts';

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

export async function migrateClickHouse(config: ClickHouseConfig, log: Logger, dir = CLICKHOUSE_MIGRATIONS_DIR): Promise<void> {
  // A migration may backfill a table from millions of rows: minutes, not the queries' 30 s.
  const server = createClickHouse(config, '', 3_600_000, log);
  const db = ident(config.CLICKHOUSE_DATABASE);
  try {
    await server.exec(sql`CREATE DATABASE IF NOT EXISTS ${db}`);
    await server.exec(
      sql`CREATE TABLE IF NOT EXISTS ${db}.schema_migrations (name String, applied_at DateTime DEFAULT now()) ENGINE = MergeTree ORDER BY name`,
    );
    const done = new Set(
      (await server.rows<{ name: string }>(sql`SELECT name FROM ${db}.schema_migrations`)).map((r) => r.name),
    );
    const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
    for (const file of files) {
      if (done.has(file)) continue;
      const text = await readFile(`${dir}/${file}`, 'utf8');
      for (const statement of splitStatements(text)) {
        // Migration files are our own code, not input: `{db}` names the configured database.
        await server.exec(new SqlFragment(statement.replaceAll('{db}', db.text)));
      }
      await server.exec(sql`INSERT INTO ${db}.schema_migrations (name) VALUES (${file})`);
      log.info({ migration: file }, 'clickhouse migration applied');
    }
  } finally {
    await server.close();
  }
}
