// Postgres and ClickHouse databases of this test file's own, for files whose processes would
// otherwise take or see other files' work in the run's shared databases: a mail sender takes every
// queued message, a broadcast worker every due job, an ingress relays every unpublished outbox row.
// With their own databases such files run side by side with the rest instead of one at a time.
import { afterAll, beforeAll } from 'vitest';
import { createLogger } from '../../src/platform/logger.ts';
import { migrateAll } from '../../src/platform/migrations.ts';
import { testConfig, useDatabasesOfThisFile } from './env.ts';
import { freshDatabases } from './fresh-databases.ts';

/**
 * Call at the top of a test file, before its own hooks: the file's testEnv() (its ingresses and the
 * processes it starts) then points at fresh, migrated databases (`linkmail_own_…`), dropped when the file is done.
 */
export function useOwnDatabases(): void {
  const own = freshDatabases('own');
  beforeAll(async () => {
    useDatabasesOfThisFile(own.databaseEnv());
    const config = testConfig();
    await migrateAll(config, createLogger(config, 'test-own-databases'));
  }, 120_000);
  // Registered first, so run last (vitest runs after-hooks as a stack): the file's processes are gone by then.
  afterAll(async () => {
    await own.drop();
    useDatabasesOfThisFile(undefined);
  });
}
