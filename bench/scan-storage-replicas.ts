// The replicated round of the scan-storage benchmark (issue 53): what storing a scan costs on three
// ClickHouse replicas over a ZooKeeper ensemble of three (test/support/clickhouse-replicas.ts), against
// the stack's single server in the same run, both stored the way the scan sink stores them: the
// exactly-once check (sequentially consistent on replicas), then the insert in deterministic blocks
// (with a quorum of 2 on replicas), into the table with every rollup.
// The cost is the CPU of every ClickHouse server (and, on replicas, every ZooKeeper node) from the
// first check until no merge nor replication task is left for two seconds, per scan, in alternating
// rounds. Imported by scan-storage.bench.ts (BENCH_REPLICAS=0 leaves it out), or run alone:
// node bench/scan-storage-replicas.ts (results: bench/results/scan-storage-replicas.json).
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { createClickHouse, type ClickHouse } from '../src/platform/clickhouse/client.ts';
import { deterministicBlocks, newEvents } from '../src/platform/clickhouse/idempotent-sink.ts';
import { ident, sql } from '../src/platform/clickhouse/literal.ts';
import { migrateClickHouse } from '../src/platform/clickhouse/migrate.ts';
import { insertSettings } from '../src/platform/clickhouse/replication.ts';
import { loadConfig } from '../src/platform/config.ts';
import { createLogger } from '../src/platform/logger.ts';
import type { ScanEvent } from '../src/links/scans/scan-event.ts';
import { SCAN_COLUMNS, SCANS_TABLE } from '../src/links/scans/scan-sink.ts';
import { REPLICAS, startTestReplicas, type TestReplicas } from '../test/support/clickhouse-replicas.ts';
import { cpuDelta, sampleCpu, stackProcesses } from './cpu.ts';
import { BENCH_ENV, medianBy, writeResult } from './lib.ts';

const DATABASE = 'linkmail_bench_storage_replicas';
const BATCH = 20_000;

export interface ReplicasRound {
  singleServerUs: number;
  threeReplicasUs: number;
  /** Of the replicas' cost: the ClickHouse servers, and the ZooKeeper nodes. */
  replicasClickHouseUs: number;
  zookeeperUs: number;
  ratio: number;
}

/** `size` scans of the last second, of a workspace's traffic (1,000 links, 50,000 visitors). */
function batch(size: number): ScanEvent[] {
  const workspaces = Array.from({ length: 5 }, () => randomUUID());
  const now = Date.now();
  return Array.from({ length: size }, (_, i) => {
    const scanId = randomUUID();
    const link = i % 1000;
    return {
      scanId, clickId: `${scanId}.sig`, workspaceId: workspaces[link % 5]!, linkId: `00000000-0000-4000-8000-${String(link).padStart(12, '0')}`, shortId: `s${link}`, campaignId: null,
      timestamp: now - 1000 + Math.floor((i * 1000) / size), destination: 'https://example.com/landing?ref=bench', country: ['US', 'DE', 'FR', 'IN'][i % 4]!, region: null, city: null,
      device: i % 2 ? 'mobile' : 'desktop', os: i % 2 ? 'iOS' : 'Windows', browser: i % 2 ? 'Mobile Safari' : 'Chrome', isBot: false, referrer: null, referrerHost: null,
      utmSource: null, utmMedium: null, utmCampaign: null, utmTerm: null, utmContent: null, visitorId: `v${Math.floor(Math.random() * 50_000)}`, userAgent: 'Mozilla/5.0',
    };
  });
}

/** As the scan sink stores a batch: the check, then the insert in deterministic blocks with the table's settings. */
async function store(ch: ClickHouse, events: ScanEvent[]): Promise<void> {
  const fresh = await newEvents(ch, SCANS_TABLE, events);
  const settings = await insertSettings(ch, 'scans');
  for (const block of deterministicBlocks(fresh, SCANS_TABLE.idOf, BATCH)) await ch.insertRowBinary(SCANS_TABLE.inputTable, SCAN_COLUMNS, block, { settings });
}

/** Until, on every server, no merge nor replication task of the database has been seen for two seconds (at most a minute). */
async function settled(servers: ClickHouse[]): Promise<void> {
  const end = Date.now() + 60_000;
  let quietSince = Date.now();
  while (Date.now() < end) {
    let busy = 0;
    for (const s of servers) {
      const [row] = await s.rows<{ n: string }>(sql`SELECT (SELECT count() FROM system.merges WHERE database = ${DATABASE}) + (SELECT count() FROM system.replication_queue WHERE database = ${DATABASE}) AS n`);
      busy += Number(row?.n ?? 0);
    }
    if (busy > 0) quietSince = Date.now();
    else if (Date.now() - quietSince >= 2000) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** CPU per scan (µs) of each group for `work` over `scans` scans, until `servers` settled. */
async function usPerScan(groups: Record<string, number[]>, servers: ClickHouse[], scans: number, work: () => Promise<void>): Promise<Record<string, number>> {
  await settled(servers);
  const before = sampleCpu(groups);
  await work();
  await settled(servers);
  return Object.fromEntries(Object.entries(cpuDelta(before, sampleCpu(groups))).map(([k, ms]) => [k, Number(((ms * 1000) / scans).toFixed(1))]));
}

/** Rounds of the single server against three replicas, `scans` scans each. */
export async function replicasRounds(rounds: number, scans: number): Promise<{ rounds: ReplicasRound[]; medians: ReplicasRound }> {
  const replicas: TestReplicas = await startTestReplicas();
  const singleConfig = loadConfig({ ...process.env, ...BENCH_ENV, CLICKHOUSE_DATABASE: DATABASE });
  const replicasConfig = loadConfig({ ...process.env, ...BENCH_ENV, ...replicas.env, CLICKHOUSE_DATABASE: DATABASE });
  const log = createLogger({ LOG_LEVEL: 'warn' });
  const single = createClickHouse(singleConfig, DATABASE, 600_000);
  const singleServer = createClickHouse(singleConfig, '', 600_000);
  const three = createClickHouse(replicasConfig, DATABASE, 600_000);
  const eachReplica = REPLICAS.map((r) => createClickHouse(loadConfig({ ...process.env, ...BENCH_ENV, ...replicas.env, CLICKHOUSE_URL: replicas.urlOf(r) }), '', 600_000));
  try {
    await singleServer.exec(sql`DROP DATABASE IF EXISTS ${ident(DATABASE)}`);
    await migrateClickHouse(singleConfig, log);
    await migrateClickHouse(replicasConfig, log);
    const replicaPids = REPLICAS.map((r) => replicas.pidOf(r));
    const singleGroup = { clickhouse: stackProcesses().clickhouse!.filter((pid) => !replicaPids.includes(pid)) };
    const replicasGroup = { clickhouse: replicaPids, zookeeper: REPLICAS.map((n) => replicas.zookeeperPidOf(n)) };
    // A few minutes of load in each before measuring.
    for (let i = 0; i < 3; i++) {
      await store(single, batch(10_000));
      await store(three, batch(10_000));
    }
    const measured: ReplicasRound[] = [];
    for (let round = 0; round < rounds; round++) {
      const batches = () => Array.from({ length: scans / BATCH }, () => batch(BATCH));
      const one = await usPerScan(singleGroup, [singleServer], scans, async () => { for (const b of batches()) await store(single, b); });
      const many = await usPerScan(replicasGroup, eachReplica, scans, async () => { for (const b of batches()) await store(three, b); });
      const threeReplicasUs = Number((many.clickhouse! + many.zookeeper!).toFixed(1));
      measured.push({ singleServerUs: one.clickhouse!, threeReplicasUs, replicasClickHouseUs: many.clickhouse!, zookeeperUs: many.zookeeper!, ratio: Number((threeReplicasUs / one.clickhouse!).toFixed(2)) });
      console.log(`round ${round + 1}: one server ${one.clickhouse} µs a stored scan; three replicas ${threeReplicasUs} (ClickHouse ${many.clickhouse}, ZooKeeper ${many.zookeeper})`);
    }
    const median = (key: keyof ReplicasRound) => medianBy(measured, (r) => r[key])[key];
    return {
      rounds: measured,
      medians: { singleServerUs: median('singleServerUs'), threeReplicasUs: median('threeReplicasUs'), replicasClickHouseUs: median('replicasClickHouseUs'), zookeeperUs: median('zookeeperUs'), ratio: median('ratio') },
    };
  } finally {
    await singleServer.exec(sql`DROP DATABASE IF EXISTS ${ident(DATABASE)}`).catch(() => undefined);
    for (const c of [single, singleServer, three, ...eachReplica]) await c.close();
    await replicas.release();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const result = await replicasRounds(Number(process.env.BENCH_ROUNDS ?? 3), Number(process.env.BENCH_SCANS ?? 100_000));
  console.log(JSON.stringify(result, null, 2));
  writeResult('scan-storage-replicas', { benchmark: 'scan-storage-replicas', scansPerInsert: BATCH, ...result });
}
