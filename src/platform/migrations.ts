// The schema migrations every process runs at start: Postgres, then ClickHouse,
// both under one Postgres advisory lock, so that any number of ingress and worker
// processes started at the same moment on empty databases apply each migration
// once, in order, and none reads a ClickHouse table another is still creating.
// node-pg-migrate locks its own run too; ClickHouse has no lock of its own.
// Before them, a database migrated under the migrations' old names is moved to
// the new ones (postgres/migration-renames.ts). After the Postgres migrations,
// still under the lock, the products' sealed columns are brought to the sealed
// form (secrets/sealed-columns.ts): SQL migrations cannot seal, as they do not
// know the key.
import pg from 'pg';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { migrateClickHouse } from './clickhouse/migrate.ts';
import { migratePostgres } from './postgres/migrate.ts';
import { renameAppliedMigrations } from './postgres/migration-renames.ts';
import { ensureDatabase } from './postgres/pool.ts';
import { sealStoredSecrets, type SealedColumn } from './secrets/sealed-columns.ts';
import { SealedSecrets } from './secrets/sealed-secrets.ts';
import { secretsKeysOf } from './secrets/secrets-keys.ts';

/** `sealed`: the products' sealed columns (src/service.ts); their clear values are sealed after the Postgres migrations. */
export async function migrateAll(config: Config, log: Logger, sealed: readonly SealedColumn[] = []): Promise<void> {
  await ensureDatabase(config.DATABASE_URL);
  const session = new pg.Client({ connectionString: config.DATABASE_URL });
  await session.connect();
  try {
    // Named by the ClickHouse database too: two Postgres databases may share one ClickHouse server.
    await session.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [`linkmail:migrations:${config.CLICKHOUSE_DATABASE}`]);
    await renameAppliedMigrations(session, log);
    await migratePostgres(config.DATABASE_URL, log);
    await sealStoredSecrets(session, new SealedSecrets(secretsKeysOf(config)), sealed, log);
    await migrateClickHouse(config, log);
  } finally {
    // Ending the session frees the lock, also when a migration failed.
    await session.end();
  }
}
