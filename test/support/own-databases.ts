// Postgres and ClickHouse databases of this test file's own, for files whose processes would
// otherwise take or see other files' work in the run's shared databases: a mail sender takes every
// queued message, a broadcast worker every due job, an ingress relays every unpublished outbox row.
// With their own databases such files run side by side with the rest instead of one at a time.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { createLogger } from '../../src/platform/logger.ts';
import { migrateAll } from '../../src/platform/migrations.ts';
import { dropDatabases } from './drop-databases.ts';
import { testConfig, useDatabasesOfThisFile } from './env.ts';

/**
 * Call at the top of a test file, before its own hooks: the file's testEnv() (its ingresses and the
 * processes it starts) then points at fresh, migrated databases, dropped when the file is done.
 */
export function useOwnDatabases(): void {
  const name = `linkmail_own_${randomBytes(4).toString('hex')}`;
  beforeAll(async () => {
    const url = new URL(testConfig().DATABASE_URL);
    url.pathname = `/${name}`;
    useDatabasesOfThisFile({ DATABASE_URL: url.toString(), CLICKHOUSE_DATABASE: name });
    const config = testConfig();
    await migrateAll(config, createLogger(config, 'test-own-databases'));
  }, 120_000);
  // Registered first, so run last (vitest runs after-hooks as a stack): the file's processes are gone by then.
  afterAll(async () => {
    await dropDatabases(testConfig(), name);
    useDatabasesOfThisFile(undefined);
  });
}
