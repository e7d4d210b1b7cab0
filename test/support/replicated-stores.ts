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
  /** Closes the clients and removes the replicas. */
  release: () => Promise<void>;
}

export async function startReplicatedStores(database: string): Promise<ReplicatedStores> {
  const replicas = await startTestReplicas();
  const config = testConfig({ ...replicas.env, CLICKHOUSE_DATABASE: database });
  await migrateClickHouse(config, createLogger({ LOG_LEVEL: 'silent' }));
  const ch = createClickHouse(config);
  const pg = createPool(config);
  return {
    replicas, ch, pg,
    release: async () => {
      await ch.close();
      await pg.end();
      await replicas.release();
    },
  };
}
