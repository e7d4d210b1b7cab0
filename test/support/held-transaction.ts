// A write left uncommitted in a transaction of its own, so that a request can be made to
// race it deterministically: the request reads the rows as they were, then waits on the held
// row locks; commit() lets it go on against the changed rows (a delete that won the race).
import type { Pool, PoolClient } from 'pg';
import { eventually } from './env.ts';

export interface HeldTransaction {
  /** Resolves once some session waits on this transaction's locks (the racing request reached them). */
  untilBlocking: (timeoutMs?: number) => Promise<void>;
  commit: () => Promise<void>;
}

export async function holdWrite(pool: Pool, sql: string, params: unknown[]): Promise<HeldTransaction> {
  const client: PoolClient = await pool.connect();
  await client.query('BEGIN');
  await client.query(sql, params);
  const { pid } = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!;
  return {
    untilBlocking: async (timeoutMs = 10_000) => {
      await eventually(async () => (await pool.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid])).rowCount! > 0, timeoutMs);
    },
    commit: async () => {
      try {
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    },
  };
}
