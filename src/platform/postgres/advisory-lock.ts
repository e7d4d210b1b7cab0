// A Postgres session advisory lock held while fn runs: serialises work on one
// name across processes (e.g. two consumers that briefly both think they own a
// partition during a rebalance).
import type { Pool } from './pool.ts';

export async function withAdvisoryLock<T>(pg: Pool, name: string, fn: () => Promise<T>): Promise<T> {
  const client = await pg.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [name]);
    try {
      return await fn();
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [name]);
    }
  } finally {
    client.release();
  }
}
