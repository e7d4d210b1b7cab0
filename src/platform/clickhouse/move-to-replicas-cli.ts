// Moves a single-server deployment's ClickHouse tables onto replicas (move-to-replicas.ts), with the
// service's settings: CLICKHOUSE_URL the replicas, the old server first; CLICKHOUSE_REPLICATED=on.
//   CLICKHOUSE_URL=http://old:8123,http://r2:8123,http://r3:8123 CLICKHOUSE_REPLICATED=on \
//     node src/platform/clickhouse/move-to-replicas-cli.ts
// Prints each table moved and its rows; exits 1 with the reason when it cannot.
import { loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { moveToReplicas, SINGLE_SUFFIX } from './move-to-replicas.ts';

const config = loadConfig();
try {
  const moved = await moveToReplicas(config, createLogger({ LOG_LEVEL: 'warn' }, 'move-to-replicas'));
  for (const { table, rows } of moved) console.log(`${config.CLICKHOUSE_DATABASE}.${table}: ${rows} rows, replicated (the old table is ${table}${SINGLE_SUFFIX})`);
  console.log(`${moved.length} tables moved; every replica has every row`);
} catch (err) {
  console.error(`move-to-replicas: ${(err as Error).message}`);
  process.exitCode = 1;
}
