// Runs once before the suite: checks the real stack is up, gives this run its
// own Postgres and ClickHouse databases and topic prefix, migrates them, and
// clears what earlier runs left behind. Its teardown, once the suite is done,
// deletes this run's topics, consumer groups and registry subjects from the
// shared broker and registry, and fails the run if any is left.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { Kafka, logLevel } from 'kafkajs';
import { deleteOwned, ownedLeftovers, underPrefix, type SharedServices } from './support/kafka-leftovers.ts';
import { removeLeftClusters, removeRunClusters } from './support/kafka-cluster.ts';
import { removeLeftReplicas } from './support/clickhouse-replicas.ts';
import { dropDatabases, dropLeftoverFileDatabases } from './support/drop-databases.ts';
import { loadConfig } from '../src/platform/config.ts';
import { createLogger } from '../src/platform/logger.ts';
import { migrateAll } from '../src/platform/migrations.ts';
import { runChecks, type Check } from '../src/platform/health.ts';
import { createClickHouse } from '../src/platform/clickhouse/client.ts';
import { kafkaSecurity } from '../src/platform/kafka/security.ts';
import { databaseUrlFor } from '../src/platform/postgres/pool.ts';
import { registryConnection, registryGet } from '../src/platform/registry/registry-connection.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    testEnv: Record<string, string>;
  }
}

const TEST_TOPIC_PREFIX = /^test-[0-9a-f]{8}$/;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const base = loadConfig();
  const runId = randomBytes(4).toString('hex');
  // TEST_RUN_NAME gives a run its own databases and leaves other runs' topics alone,
  // so two runs can share one machine's stack (the default run cleans up after all).
  // A run without one while another such run is going (two people, or a person and
  // CI, each running a file) is named for itself, rather than dropping the other's
  // databases under it.
  const locks = await runLocks(base.DATABASE_URL);
  const named = process.env.TEST_RUN_NAME;
  if (named && !/^[a-z0-9_]{1,20}$/.test(named)) throw new Error('TEST_RUN_NAME: use 1-20 of a-z, 0-9, _');
  const runName = named || (await locks.takeDefault() ? undefined : `auto_${runId}`);
  const database = runName ? `linkmail_test_${runName}` : 'linkmail_test';
  const pgUrl = new URL(base.DATABASE_URL);
  pgUrl.pathname = `/${database}`;
  const testEnv: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
    DATABASE_URL: pgUrl.toString(),
    CLICKHOUSE_DATABASE: database,
    TOPIC_PREFIX: `test-${runId}`,
    // Many ingresses run at once, so none listens for inbound SMTP unless its test asks (with '0', a free port).
    MAIL_INBOUND_SMTP_PORT: '-1',
    MAIL_RELAY_SMTP_PORT: '-1',
    // Likewise no operations port (/metrics) unless a test asks for one.
    METRICS_PORT: '-1',
    // Files run side by side and load ClickHouse: counting a link's scans may take longer than
    // production's bounds there (500 ms for a redirect, 2 s for setting a limit), and a redirect let
    // through uncounted, or a limit refused, would fail a test of something else. The test of those
    // bounds sets its own.
    SCAN_LIMIT_SEED_WAIT_MS: '10000',
    SCAN_LIMIT_COUNT_TIMEOUT_MS: '20000',
    // Several files kill a worker and wait for another to take its partitions: the broker hands them
    // over once the killed member's session ends, 10 s here instead of production's 30.
    ACTOR_SESSION_TIMEOUT_MS: '10000',
    // Two cores under the whole suite: opening a Postgres connection once took over 5 s in CI and
    // failed an ingress's start; a slow connection is not what any test here is about.
    DATABASE_CONNECT_TIMEOUT_MS: '30000',
    // Seals stored secrets: run.sh's (.stack/secrets-key) when it runs the suite, else one of this run's.
    SECRETS_KEYS: process.env.SECRETS_KEYS || `test:${randomBytes(32).toString('base64')}`,
  };
  const config = loadConfig({ ...process.env, ...testEnv });
  const log = createLogger(config, 'test-setup');

  await requireStack(config);

  // Clean Postgres and ClickHouse databases for this run, migrated as every process migrates them.
  await dropDatabases(config, database);
  await migrateAll(config, log);

  const services: SharedServices = config;
  // Runs that stopped before their teardown (killed, or a crashed stack) leave theirs behind;
  // only when no other run is going, since theirs look the same.
  const alone = await locks.alone();
  if (!runName && alone) {
    await deleteOwned(services, (name) => TEST_TOPIC_PREFIX.test(name.split('.')[0] ?? ''));
    await dropLeftoverFileDatabases(config);
  }

  project.provide('testEnv', testEnv);

  return async () => {
    // The run's shared three-node cluster, and those of fault tests whose process died before it removed them (their JVMs run on).
    await removeRunClusters();
    await removeLeftClusters();
    // ClickHouse replicas of fault tests whose process died before it removed them.
    await removeLeftReplicas();
    if (runName?.startsWith('auto_')) await dropDatabases(config, database);
    await locks.release();
    const owned = underPrefix(config.TOPIC_PREFIX);
    await deleteOwned(services, owned);
    // The broker forgets deleted topics a moment after it confirms the delete.
    let left: string[] = [];
    for (const end = Date.now() + 30_000; ; ) {
      left = await ownedLeftovers(services, owned);
      if (left.length === 0 || Date.now() > end) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    if (left.length > 0) throw new Error(`test run ${config.TOPIC_PREFIX} could not delete from the shared stack: ${left.join(', ')}`);
  };
}

// Advisory locks (held by one Postgres session for the run's life; a killed run's are freed with
// its connection): the default run holds DEFAULT_RUN; every run holds RUNNING shared, so a run that
// gets it exclusively knows it is alone.
const DEFAULT_RUN = 7_340_001;
const RUNNING = 7_340_002;

async function runLocks(databaseUrl: string) {
  const session = new pg.Client({ connectionString: databaseUrlFor(databaseUrl, 'postgres') });
  await session.connect();
  const tryLock = async (sqlText: string) => (await session.query<{ ok: boolean }>(sqlText)).rows[0]!.ok;
  return {
    takeDefault: () => tryLock(`SELECT pg_try_advisory_lock(${DEFAULT_RUN}) AS ok`),
    /** Whether no other run is going; either way, this run counts as going from now on. */
    alone: async () => {
      const alone = await tryLock(`SELECT pg_try_advisory_lock(${RUNNING}) AS ok`);
      if (alone) await session.query(`SELECT pg_advisory_unlock(${RUNNING})`);
      await session.query(`SELECT pg_advisory_lock_shared(${RUNNING})`);
      return alone;
    },
    release: () => session.end(),
  };
}

async function requireStack(config: ReturnType<typeof loadConfig>): Promise<void> {
  const kafka = new Kafka({ brokers: config.KAFKA_BROKERS.split(','), ...kafkaSecurity(config), logLevel: logLevel.NOTHING, retry: { retries: 1 } });
  const admin = kafka.admin();
  const checks: Check[] = [
    { name: 'kafka', run: async () => { await admin.connect(); await admin.describeCluster(); await admin.disconnect(); } },
    { name: 'schemaRegistry', run: async () => { const r = await registryGet(registryConnection(config), '/subjects'); if (r.status !== 200) throw new Error(`HTTP ${r.status}`); } },
    { name: 'clickhouse', run: async () => { const ch = createClickHouse(config, ''); try { if (!(await ch.ping())) throw new Error('ping failed'); } finally { await ch.close(); } } },
    { name: 'postgres', run: async () => { const c = new pg.Client({ connectionString: databaseUrlFor(config.DATABASE_URL, 'postgres') }); await c.connect(); await c.end(); } },
  ];
  const results = await runChecks(checks, 10_000);
  const down = results.filter((r) => !r.ok);
  if (down.length > 0) {
    throw new Error(`the local stack is not up (${down.map((d) => `${d.name}: ${d.error}`).join('; ')}); start it with: bash infra/local/stack.sh start`);
  }
}
