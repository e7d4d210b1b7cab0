// Three ClickHouse replicas of a test file's own with a database migrated on them, and the clients a
// test of the sinks or the privacy runner needs: ClickHouse over the three, and the file's Postgres.
import { createClickHouse, type ClickHouse } from '../../src/platform/clickhouse/client.ts';
import { migrateClickHouse } from '../../src/platform/clickhouse/migrate.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createPool, type Pool } from '../../src/platform/postgres/pool.ts';
import { startTestReplicas, type TestReplicas } from './clickhouse-replicas.ts';
import { testConfig } from './env.ts';

export interface ReplicatedStores {
  replicas: TestReplicas;
  ch: ClickHouse;
  pg: Pool;
  /** Closes the clients and removes the replicas (all of it, whatever fails first). */
  release: () => Promise<void>;
}

export async function startReplicatedStores(database: string): Promise<ReplicatedStores> {
  const replicas = await startTestReplicas();
  const config = testConfig({ ...replicas.env, CLICKHOUSE_DATABASE: database });
  const ch = createClickHouse(config);
  const pg = createPool(config);
  const release = async () => {
    const closed = await Promise.allSettled([ch.close(), pg.end()]);
    await replicas.release();
    for (const c of closed) if (c.status === 'rejected') throw c.reason;
  };
  try {
    await migrateClickHouse(config, createLogger({ LOG_LEVEL: 'silent' }));
  } catch (err) {
    // The file's afterAll has nothing to release yet: the replicas would outlive it.
    await release().catch(() => {});
    throw err;
  }
  return { replicas, ch, pg, release };
}
