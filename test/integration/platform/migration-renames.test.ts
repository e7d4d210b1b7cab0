// A database migrated under the Postgres migrations' old names (numbered with gaps: 021, 024,
// 040, 050 …; or stopped at the replaced 012_mail_publish_lease) is moved over by the runner
// every process runs at start: no error, and its applied migrations carry the files' names.
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { createLogger } from '../../../src/platform/logger.ts';
import { migrateAll } from '../../../src/platform/migrations.ts';
import { migratePostgres, POSTGRES_MIGRATIONS_DIR } from '../../../src/platform/postgres/migrate.ts';
import { RENAMED_MIGRATIONS, REPLACED_012 } from '../../../src/platform/postgres/migration-renames.ts';
import { ensureDatabase } from '../../../src/platform/postgres/pool.ts';
import { freshDatabases } from '../../support/fresh-databases.ts';
import { testConfig } from '../../support/env.ts';

const BEFORE_OUTBOX = fileURLToPath(new URL('../../fixtures/migrations-before-outbox', import.meta.url));
const fileNames = readdirSync(POSTGRES_MIGRATIONS_DIR).sort().map((f) => f.replace(/\.sql$/, ''));
const databases: ReturnType<typeof freshDatabases>[] = [];
afterAll(async () => {
  for (const db of databases) await db.drop();
});

function fresh() {
  const db = freshDatabases('renames');
  databases.push(db);
  const config = testConfig(db.databaseEnv());
  return { config, log: createLogger(config, 'test-migration-renames') };
}

async function withSession<T>(url: string, work: (session: pg.Client) => Promise<T>): Promise<T> {
  const session = new pg.Client({ connectionString: url });
  await session.connect();
  try {
    return await work(session);
  } finally {
    await session.end();
  }
}

const appliedNames = (url: string) =>
  withSession(url, async (s) => (await s.query<{ name: string }>('SELECT name FROM pgmigrations ORDER BY run_on, id')).rows.map((r) => r.name));

it('moves a database migrated under the old names to the new ones, which the runner alone refuses', async () => {
  const { config, log } = fresh();
  await migrateAll(config, log);
  // As a database migrated before the renumbering has them.
  await withSession(config.DATABASE_URL, async (s) => {
    for (const [old, now] of RENAMED_MIGRATIONS) await s.query('UPDATE pgmigrations SET name = $1 WHERE name = $2', [old, now]);
  });
  expect(await appliedNames(config.DATABASE_URL)).toContain('051_scan_privacy');
  await expect(migratePostgres(config.DATABASE_URL, log)).rejects.toThrow(/Not run migration/);

  await migrateAll(config, log);
  expect(await appliedNames(config.DATABASE_URL)).toEqual(fileNames);
  // And again, on the moved database: nothing to do.
  await migrateAll(config, log);
  expect(await appliedNames(config.DATABASE_URL)).toEqual(fileNames);
});

it('brings a database stopped at the replaced 012_mail_publish_lease to the outbox, its unpublished messages in it', async () => {
  const { config, log } = fresh();
  // The migrations as they were for those 41 minutes: 009 with published_at, and the old 012.
  const dir = mkdtempSync(join(tmpdir(), 'linkmail-before-outbox-'));
  try {
    for (const name of fileNames.filter((n) => n < '012')) copyFileSync(join(POSTGRES_MIGRATIONS_DIR, `${name}.sql`), join(dir, `${name}.sql`));
    for (const file of readdirSync(BEFORE_OUTBOX)) copyFileSync(join(BEFORE_OUTBOX, file), join(dir, file));
    await ensureDatabase(config.DATABASE_URL);
    await runner({ databaseUrl: config.DATABASE_URL, dir, direction: 'up', migrationsTable: 'pgmigrations', count: Infinity, checkOrder: true, log: () => {} });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const ids = await withSession(config.DATABASE_URL, async (s) => {
    const org = (await s.query<{ id: string }>(`INSERT INTO mail_organizations (name, plan) VALUES ('old', 'free') RETURNING id`)).rows[0]!.id;
    const message = async (status: string, publishedAt: Date | null, leaseUntil: Date | null) =>
      (
        await s.query<{ id: string }>(
          `INSERT INTO mail_messages (organization_id, from_address, from_domain, to_addresses, subject, recipient_count, status, published_at, publish_lease_until)
           VALUES ($1, 'a@old.example', 'old.example', '{b@example.com}', 'hi', 1, $2, $3, $4) RETURNING id`,
          [org, status, publishedAt, leaseUntil],
        )
      ).rows[0]!.id;
    return {
      unpublished: await message('queued', null, new Date(Date.now() + 30_000)),
      published: await message('queued', new Date(), null),
      suppressed: await message('suppressed', null, null),
    };
  });
  expect(await appliedNames(config.DATABASE_URL)).toContain(REPLACED_012);

  await migrateAll(config, log);

  expect(await appliedNames(config.DATABASE_URL)).toEqual(fileNames);
  await withSession(config.DATABASE_URL, async (s) => {
    const outbox = await s.query<{ message_id: string }>('SELECT message_id FROM mail_message_outbox');
    expect(outbox.rows).toEqual([{ message_id: ids.unpublished }]);
    const columns = await s.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'mail_messages' AND column_name IN ('published_at', 'publish_lease_until')`,
    );
    expect(columns.rows).toEqual([]);
  });
});
