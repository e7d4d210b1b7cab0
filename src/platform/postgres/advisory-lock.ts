// A Postgres session advisory lock held while fn runs: serialises work on one
// name across processes (e.g. two consumers that briefly both think they own a
// partition during a rebalance).
import type { Pool } from './pool.ts';

export async function withAdvisoryLock<T>(pg: Pool, name: string, fn: () => Promise<T>): Promise<T> {
  const client = await pg.connect();
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [name]);
    try {
      return await fn();
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [name]).catch((err: Error) => {
        broken = err;
      });
    }
  } finally {
    // A connection whose unlock failed may still hold the lock: destroy it rather than reuse it.
    client.release(broken);
  }
}
