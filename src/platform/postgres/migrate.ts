// Postgres schema migrations with node-pg-migrate (plain SQL files in
// migrations/postgres, applied in name order), on a database that exists; every
// process runs them through migrations.ts, which creates the database and holds
// the lock that makes processes starting at once apply each migration once.
import { runner } from 'node-pg-migrate';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../logger.ts';

export const POSTGRES_MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/postgres', import.meta.url));

export async function migratePostgres(databaseUrl: string, log: Logger): Promise<void> {
  const applied = await runner({
    databaseUrl,
    dir: POSTGRES_MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    count: Infinity,
    checkOrder: true,
    advisoryLockMode: 'wait',
    logger: { debug: () => {}, info: () => {}, warn: (m: string) => log.warn(m), error: (m: string) => log.error(m) },
  });
  if (applied.length > 0) log.info({ migrations: applied.map((m) => m.name) }, 'postgres migrations applied');
}
