// The one migration source on three replicas of its own (test/support/clickhouse-replicas.ts): with
// CLICKHOUSE_REPLICATED=on every table and rollup is Replicated* on every replica, the same objects as
// on a single server; a replica added later takes the tables and their rows; and a populated
// single-server database moves onto the replicas in place (move-to-replicas-cli.ts) with every row
// on every replica, seen by the sinks' sequentially consistent existence check right away, its views
// still feeding the rollups. A process starts while a replica is down
// when nothing is left to migrate.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClickHouse } from '../../../src/platform/clickhouse/client.ts';
import { ident, sql } from '../../../src/platform/clickhouse/literal.ts';
import { newEvents } from '../../../src/platform/clickhouse/idempotent-sink.ts';
import { insertSettings } from '../../../src/platform/clickhouse/replication.ts';
import { onEveryServer } from '../../support/clickhouse-servers.ts';
import { CLICKHOUSE_MIGRATIONS_DIR, migrateClickHouse } from '../../../src/platform/clickhouse/migrate.ts';
import { createLogger } from '../../../src/platform/logger.ts';
import { startTestReplicas, REPLICAS, type Replica, type TestReplicas } from '../../support/clickhouse-replicas.ts';
import { testConfig, testEnv } from '../../support/env.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SILENT = createLogger({ LOG_LEVEL: 'silent' });
let replicas: TestReplicas;

beforeAll(async () => {
  replicas = await startTestReplicas();
}, 120_000);

afterAll(async () => {
  await replicas?.release();
});

/** A database's tables and views on one replica: name → engine. */
async function objectsOn(replica: Replica, database: string): Promise<Record<string, string>> {
  const text = await replicas.query(replica, `SELECT name, engine FROM system.tables WHERE database = '${database}' AND name != 'schema_migrations' ORDER BY name`);
  return Object.fromEntries(text.trim().split('\n').filter(Boolean).map((line) => line.split('\t') as [string, string]));
}

/** Every table's row count on one replica (views have none of their own). */
async function countsOn(replica: Replica, database: string, names: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const name of names) counts[name] = Number(await replicas.query(replica, `SELECT count() FROM ${database}.${name}`));
  return counts;
}

/** The scans stored, and the scans the rollup counts (one `agent` row a scan). */
const scansAndRollup = (database: string) => `SELECT (SELECT count() FROM ${database}.scans), (SELECT sum(scans) FROM ${database}.scans_dims WHERE dim = 'agent')`;

const syncAll = async (database: string, tables: string[]) => {
  for (const r of REPLICAS) for (const t of tables) await replicas.query(r, `SYSTEM SYNC REPLICA ${database}.${t}`);
};

const hour = (i: number) => new Date(Date.UTC(2026, 10, 1, i % 24)).toISOString().slice(0, 19).replace('T', ' ');

/** Scans, conversions and orphan visits of two workspaces, inserted as the sinks do (JSONEachRow). */
async function populate(url: string, database: string, scans: number, first = 0): Promise<void> {
  const ch = createClickHouse(testConfig({ ...replicas.env, CLICKHOUSE_URL: url, CLICKHOUSE_REPLICATED: 'off' }), database);
  try {
    for (let from = 0; from < scans; from += 500) {
      await ch.insert('scans_input', Array.from({ length: Math.min(500, scans - from) }, (_, k) => {
        const i = first + from + k;
        return { scan_id: `s${i}`, workspace_id: `w${i % 2}`, link_id: `l${i % 7}`, short_id: `x${i % 7}`, ts: hour(i), country: ['DE', 'FR', 'US'][i % 3], device: 'desktop', visitor_id: `v${i % 50}` };
      }));
    }
    await ch.insert('conversions', Array.from({ length: 40 }, (_, i) => ({ conversion_id: `c${i}`, type: 'lead', workspace_id: `w${i % 2}`, link_id: `l${i % 7}`, ts: hour(i) })));
    await ch.insert('orphan_visits', Array.from({ length: 30 }, (_, i) => ({ visit_id: `o${i}`, workspace_id: `w${i % 2}`, type: 'base_url', ts: hour(i) })));
  } finally {
    await ch.close();
  }
}

it('creates every table and rollup Replicated* on each replica, the same objects as on a single server, once per server', async () => {
  const database = 'repl_fresh';
  const config = testConfig({ ...replicas.env, CLICKHOUSE_DATABASE: database });
  await migrateClickHouse(config, SILENT);
  // A database of this test's own on the stack's single server, migrated from the same files (not the
  // run's, where other files of the suite make tables of their own while this runs).
  const reference = `${testConfig().CLICKHOUSE_DATABASE}_repl_single`;
  await migrateClickHouse(testConfig({ CLICKHOUSE_DATABASE: reference }), SILENT);
  const stack = createClickHouse(testConfig());
  const single = await stack.rows<{ name: string; engine: string }>(sql`SELECT name, engine FROM system.tables WHERE database = ${reference} AND name != 'schema_migrations' ORDER BY name`);
  await stack.close();
  await onEveryServer(testConfig(), sql`DROP DATABASE IF EXISTS ${ident(reference)}`, '');
  const first = await objectsOn(1, database);
  expect(Object.keys(first)).toEqual(single.map((t) => t.name));
  for (const { name, engine } of single) expect(first[name]).toBe(engine.endsWith('MergeTree') ? `Replicated${engine}` : engine);
  for (const r of [2, 3] as const) expect(await objectsOn(r, database)).toEqual(first);
  // Each server records each file once; a second run applies nothing.
  await migrateClickHouse(config, SILENT);
  for (const r of REPLICAS) expect(await replicas.query(r, `SELECT count(), uniqExact(name) FROM ${database}.schema_migrations`)).toBe('9\t9\n');

  // A scan stored through one replica is on all three, in the scans table and the rollups its views feed.
  await populate(replicas.urlOf(2), database, 3);
  await syncAll(database, ['scans', 'scans_dims']);
  for (const r of REPLICAS) expect(await replicas.query(r, scansAndRollup(database))).toBe('3\t3\n');
}, 120_000);

it('gives a replica added later (an empty server) the tables as they are now, and their rows', async () => {
  const database = 'repl_fresh';
  await replicas.query(3, `DROP DATABASE ${database}`);
  await migrateClickHouse(testConfig({ ...replicas.env, CLICKHOUSE_DATABASE: database }), SILENT);
  expect(await objectsOn(3, database)).toEqual(await objectsOn(1, database));
  await syncAll(database, ['scans', 'scans_dims']);
  expect(await replicas.query(3, scansAndRollup(database))).toBe('3\t3\n');
  expect(await replicas.query(3, `SELECT count() FROM ${database}.schema_migrations`)).toBe('9\n');
}, 120_000);

it('lets a process start while a replica is down when nothing is left to migrate, and refuses a migration that would miss it', async () => {
  const database = 'repl_fresh';
  const config = testConfig({ ...replicas.env, CLICKHOUSE_DATABASE: database });
  const pending = mkdtempSync(join(tmpdir(), 'ch-migrations-'));
  cpSync(CLICKHOUSE_MIGRATIONS_DIR, pending, { recursive: true });
  writeFileSync(join(pending, '999_later.sql'), 'CREATE TABLE IF NOT EXISTS {db}.later (x UInt8) ENGINE = MergeTree ORDER BY x;\n');
  await replicas.kill(3);
  try {
    await migrateClickHouse(config, SILENT);
    await expect(migrateClickHouse(config, SILENT, pending)).rejects.toThrow(new RegExp(`ClickHouse migrations to apply, and replicas that do not answer: ${replicas.urlOf(3)}`));
    expect(await replicas.query(1, `EXISTS TABLE ${database}.later`)).toBe('0\n');
    await replicas.restart();
    // Back, it takes the migration with the others.
    await migrateClickHouse(config, SILENT, pending);
    for (const r of REPLICAS) expect(await replicas.query(r, `SELECT engine FROM system.tables WHERE database = '${database}' AND name = 'later'`)).toBe('ReplicatedMergeTree\n');
  } finally {
    await replicas.restart();
    rmSync(pending, { recursive: true, force: true });
  }
}, 120_000);

it('moves a populated single-server database onto the replicas in place: every row on every replica, the views still feeding the rollups', async () => {
  const database = 'repl_moved';
  // Replica 1 stands for the old single server: today's engines, populated.
  const single = { ...replicas.env, CLICKHOUSE_URL: replicas.urlOf(1), CLICKHOUSE_REPLICATED: 'off', CLICKHOUSE_DATABASE: database };
  await migrateClickHouse(testConfig(single), SILENT);
  await populate(replicas.urlOf(1), database, 2000);
  const objects = await objectsOn(1, database);
  const tables = Object.keys(objects).filter((name) => objects[name]!.endsWith('MergeTree'));
  expect(tables.length).toBeGreaterThanOrEqual(10);
  const before = await countsOn(1, database, tables);
  const rollupSum = `SELECT (SELECT sum(scans) FROM ${database}.scans_dims), (SELECT uniqHLL12Merge(visitors) FROM ${database}.scans_visitors)`;
  const rollupsBefore = await replicas.query(1, rollupSum);
  expect(before.scans).toBe(2000);

  const { stdout } = await promisify(execFile)('node', ['src/platform/clickhouse/move-to-replicas-cli.ts'], {
    cwd: ROOT,
    env: { ...testEnv(), ...replicas.env, CLICKHOUSE_DATABASE: database },
    timeout: 120_000,
  });
  expect(stdout).toContain(`${database}.scans: 2000 rows, replicated (the old table is scans__single)`);
  expect(stdout).toContain(`${tables.length} tables moved; every replica has every row`);

  for (const r of REPLICAS) {
    const on = await objectsOn(r, database);
    for (const t of tables) expect(on[t], `${t} on replica ${r}`).toBe(`Replicated${objects[t]}`);
    expect(await countsOn(r, database, tables), `replica ${r}`).toEqual(before);
    expect(await replicas.query(r, rollupSum)).toBe(rollupsBefore);
    expect(await replicas.query(r, `SELECT count() FROM ${database}.schema_migrations`)).toBe('9\n');
  }
  // The sinks' existence check (sequentially consistent) sees the moved rows on every replica right
  // away (and after the first sink batch, below): a scan replayed after the move is not stored again.
  const replayed = Array.from({ length: 2000 }, (_, i) => ({ id: `s${i}`, workspace: `w${i % 2}`, timestamp: Date.parse(`${hour(i)}Z`) }));
  const sink = { table: 'scans', tenantColumn: 'workspace_id', tenantOf: (e: (typeof replayed)[number]) => e.workspace, idColumn: 'scan_id', idOf: (e: (typeof replayed)[number]) => e.id };
  const firstBatch = { id: 'new-scan', workspace: 'w0', timestamp: Date.parse(`${hour(0)}Z`) };
  const newOn = async (r: Replica) => {
    const ch = createClickHouse(testConfig({ ...replicas.env, CLICKHOUSE_URL: replicas.urlOf(r), CLICKHOUSE_DATABASE: database }));
    try {
      return (await newEvents(ch, sink, [...replayed, firstBatch])).map((e) => e.id);
    } finally {
      await ch.close();
    }
  };
  for (const r of REPLICAS) expect(await newOn(r), `replica ${r}`).toEqual(['new-scan']);
  // The old tables stay on the old server until dropped by hand.
  expect(Number(await replicas.query(1, `SELECT count() FROM ${database}.scans__single`))).toBe(2000);
  // The views follow the swap: a scan stored now reaches the rollups on every replica, once.
  expect(await replicas.query(1, scansAndRollup(database))).toBe('2000\t2000\n');
  await populate(replicas.urlOf(3), database, 1, 2000);
  await syncAll(database, ['scans', 'scans_dims']);
  for (const r of REPLICAS) expect(await replicas.query(r, scansAndRollup(database))).toBe('2001\t2001\n');

  // The first sink batch's quorum insert into the moved rows' partition hides none of them from the check.
  const ch = createClickHouse(testConfig({ ...replicas.env, CLICKHOUSE_DATABASE: database }));
  try {
    await ch.insert('scans', [{ scan_id: firstBatch.id, workspace_id: firstBatch.workspace, link_id: 'l0', short_id: 'x0', ts: hour(0) }], { settings: await insertSettings(ch, 'scans') });
  } finally {
    await ch.close();
  }
  await syncAll(database, ['scans']);
  for (const r of REPLICAS) expect(await newOn(r), `replica ${r}`).toEqual([]);
}, 180_000);
