// Postgres schema migrations, run at start with node-pg-migrate (plain SQL files
// in migrations/postgres, applied in name order, under an advisory lock so that
// several processes starting at once apply each migration exactly once).
import { runner } from 'node-pg-migrate';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../logger.ts';
import { ensureDatabase } from './pool.ts';

export const POSTGRES_MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/postgres', import.meta.url));

export async function migratePostgres(databaseUrl: string, log: Logger): Promise<void> {
  await ensureDatabase(databaseUrl);
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
