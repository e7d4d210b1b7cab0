// What storing a recorded scan costs ClickHouse, split by the promise each part keeps (issue 18):
//   - the `scans` table alone (every scan kept, once);
//   - the table with the rollups its views fill on every insert (migrations 002, 004, 005, 006; since
//     009 the views, the table's own among them, read the Null table scans_input the sink writes to),
//     which the analytics API reads for its answers within 500 ms at 10 million scans;
//   - the exactly-once check the scan sink asks before each insert (idempotent-sink.ts `newEvents`:
//     which of these scan ids are stored already?).
// Scans are inserted as the sink inserts them under load: up to 20,000 a statement (a partition's
// 8 MiB fetch, topics/scans.ts), through our client; and, in the same rounds, 10,000 a statement,
// what the sink inserted before issue 34, since most of ClickHouse's cost is per insert.
// The cost is ClickHouse's CPU (/proc, every clickhouse process) from the first insert until no
// merge has run for two seconds, so the merges an insert causes are counted; per scan, in
// alternating rounds (the machine's speed drifts); then, once, each rollup apart.
// The traffic is a workspace's, not one link's: 1,000 links, 50,000 visitors, 15 countries, four
// browsers (the redirect benchmark's single link and visitor fill each rollup with one row an
// insert, its best case). Its own database, dropped at the end.
// Then the replicated round (scan-storage-replicas.ts; BENCH_REPLICAS=0 leaves it out): the same scans
// stored as the sink stores them on three replicas over ZooKeeper, against the single server.
// Results: bench/results/scan-storage.json.   Run: node bench/scan-storage.bench.ts
import { randomUUID } from 'node:crypto';
import { createClickHouse, type ClickHouse } from '../src/platform/clickhouse/client.ts';
import { newEvents } from '../src/platform/clickhouse/idempotent-sink.ts';
import { ident, sql } from '../src/platform/clickhouse/literal.ts';
import { migrateClickHouse } from '../src/platform/clickhouse/migrate.ts';
import { loadConfig } from '../src/platform/config.ts';
import { createLogger } from '../src/platform/logger.ts';
import type { ScanEvent } from '../src/links/scans/scan-event.ts';
import { SCAN_COLUMNS, SCANS_TABLE } from '../src/links/scans/scan-sink.ts';
import { stackProcesses, sampleCpu, cpuDelta } from './cpu.ts';
import { replicasRounds } from './scan-storage-replicas.ts';
import { BENCH_ENV, medianBy, writeResult } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Scans per measurement: the same at every insert size. */
const SCANS = Number(process.env.BENCH_SCANS ?? 100_000);
/** The sink's insert under load first (scan-sink.ts insertChunk), then the earlier one for comparison. */
const SIZES = [20_000, 10_000];
const BATCH = SIZES[0]!;
const DATABASE = 'linkmail_bench_storage';

const config = loadConfig({ ...process.env, ...BENCH_ENV, CLICKHOUSE_DATABASE: DATABASE });
const clickhouse = createClickHouse(config, DATABASE, 600_000);
const server = createClickHouse(config, '', 600_000);

// A workspace's traffic: 1,000 links, 50,000 visitors, a few dozen countries, devices and browsers.
const WORKSPACES = Array.from({ length: 5 }, () => randomUUID());
const LINKS = Array.from({ length: 1000 }, (_, i) => ({ id: randomUUID(), workspaceId: WORKSPACES[i % WORKSPACES.length]!, shortId: `s${i}` }));
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'IN', 'BR', 'JP', 'CA', 'ES', 'IT', 'NL', 'SE', 'PL', 'MX', 'AU'];
const AGENTS = [
  { device: 'mobile', os: 'iOS', browser: 'Mobile Safari', ua: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1' },
  { device: 'mobile', os: 'Android', browser: 'Chrome', ua: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36' },
  { device: 'desktop', os: 'Windows', browser: 'Chrome', ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36' },
  { device: 'desktop', os: 'Mac OS', browser: 'Safari', ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15' },
];
const pick = <T>(values: readonly T[]): T => values[Math.floor(Math.random() * values.length)]!;

function scan(timestamp: number): ScanEvent {
  const link = pick(LINKS);
  const agent = pick(AGENTS);
  const scanId = randomUUID();
  return {
    scanId, clickId: `${scanId}.sig`, workspaceId: link.workspaceId, linkId: link.id, shortId: link.shortId, campaignId: null, timestamp,
    destination: 'https://example.com/landing?ref=bench', country: pick(COUNTRIES), region: null, city: null,
    device: agent.device, os: agent.os, browser: agent.browser, isBot: false, referrer: null, referrerHost: null,
    utmSource: Math.random() < 0.3 ? 'newsletter' : null, utmMedium: null, utmCampaign: null, utmTerm: null, utmContent: null,
    visitorId: `v${Math.floor(Math.random() * 50_000)}`, userAgent: agent.ua,
  };
}

/** A batch as the sink sees it under load: `size` scans of the last second or so. */
const batch = (size = BATCH): ScanEvent[] => {
  const now = Date.now();
  return Array.from({ length: size }, (_, i) => scan(now - 1000 + Math.floor((i * 1000) / size)));
};
const batches = (size: number) => Array.from({ length: SCANS / size }, () => batch(size));

const merging = async (): Promise<number> =>
  Number((await server.rows<{ n: string }>(sql`SELECT count() AS n FROM system.merges WHERE database = ${DATABASE}`))[0]?.n ?? 0);

/** Until no merge of this database has run for two seconds (at most a minute). */
async function mergesSettled(): Promise<void> {
  const end = Date.now() + 60_000;
  let quietSince = Date.now();
  while (Date.now() < end) {
    if ((await merging()) > 0) quietSince = Date.now();
    else if (Date.now() - quietSince >= 2000) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** ClickHouse's CPU per scan, in µs, for `work` over `scans` scans, its merges included. */
async function clickhouseUsPerScan(scans: number, work: () => Promise<void>): Promise<number> {
  await mergesSettled();
  const groups = { clickhouse: stackProcesses().clickhouse! };
  const before = sampleCpu(groups);
  await work();
  await mergesSettled();
  // Two seconds of quiet are in the window: ClickHouse's own idle work then (a few ms) counts too.
  return Number(((cpuDelta(before, sampleCpu(groups)).clickhouse! * 1000) / scans).toFixed(1));
}

async function insertInto(table: string, batches: ScanEvent[][]): Promise<void> {
  // As the scan sink sends them (RowBinary).
  for (const events of batches) await clickhouse.insertRowBinary(table, SCAN_COLUMNS, events);
}

try {
  await server.exec(sql`DROP DATABASE IF EXISTS ${ident(DATABASE)}`);
  await migrateClickHouse(config, createLogger({ LOG_LEVEL: 'warn' }));
  // The same table without the views: what the scans alone cost.
  await clickhouse.exec(sql`CREATE TABLE scans_alone AS scans`);
  // Both tables hold about as much as a few minutes of load before measuring.
  for (const table of ['scans_input', 'scans_alone']) await insertInto(table, Array.from({ length: 5 }, () => batch(10_000)));

  type Round = { tableAloneUs: number; tableWithRollupsUs: number; rollupsUs: number; exactlyOnceCheckUs: number };
  const rounds: Round[] = [];
  const earlierRounds: Round[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const size of SIZES) {
      const alone = await clickhouseUsPerScan(SCANS, () => insertInto('scans_alone', batches(size)));
      const withRollups = await clickhouseUsPerScan(SCANS, () => insertInto('scans_input', batches(size)));
      // The check of new scans (none stored yet), as the sink asks it of each batch before inserting.
      const checks = batches(size);
      const check = await clickhouseUsPerScan(SCANS, async () => {
        for (const events of checks) if ((await newEvents(clickhouse, SCANS_TABLE, events)).length !== size) throw new Error('the check found scans that were never stored');
      });
      (size === BATCH ? rounds : earlierRounds).push({ tableAloneUs: alone, tableWithRollupsUs: withRollups, rollupsUs: Number((withRollups - alone).toFixed(1)), exactlyOnceCheckUs: check });
      console.log(`round ${round + 1}, ${size} scans an insert: table alone ${alone} µs a scan, with its rollups ${withRollups}, the exactly-once check ${check}`);
    }
  }
  // Each rollup apart, once: the table with only that rollup's view attached (and the view that
  // stores the scans themselves, migration 009), against the table alone just before it; the
  // difference is what the rollup costs.
  const views = (await clickhouse.rows<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${DATABASE} AND engine = 'MaterializedView' AND name != 'store_scans_mv' ORDER BY name`)).map((r) => r.name);
  const perRollupUs: Record<string, number> = {};
  // BENCH_EACH=0 leaves this part out.
  for (const view of process.env.BENCH_EACH === '0' ? [] : views) {
    const alone = await clickhouseUsPerScan(SCANS, () => insertInto('scans_alone', batches(BATCH)));
    for (const other of views) if (other !== view) await clickhouse.exec(sql`DETACH TABLE ${ident(other)}`);
    try {
      const withView = await clickhouseUsPerScan(SCANS, () => insertInto('scans_input', batches(BATCH)));
      perRollupUs[view.replace(/_mv$/, '')] = Number((withView - alone).toFixed(1));
    } finally {
      for (const other of views) if (other !== view) await clickhouse.exec(sql`ATTACH TABLE ${ident(other)}`);
    }
    console.log(`${view}: ${perRollupUs[view.replace(/_mv$/, '')]} µs a scan`);
  }
  const medians = (of: Round[]) => {
    const median = (key: keyof Round): number => medianBy(of, (r) => r[key])[key];
    return { tableAloneUs: median('tableAloneUs'), tableWithRollupsUs: median('tableWithRollupsUs'), rollupsUs: median('rollupsUs'), exactlyOnceCheckUs: median('exactlyOnceCheckUs') };
  };
  const headline = medians(rounds);
  const result = {
    benchmark: 'scan-storage',
    scansPerInsert: BATCH,
    scansPerMeasurement: SCANS,
    rounds,
    eachRollupUs: perRollupUs,
    medians: headline,
    at10000ScansAnInsert: { rounds: earlierRounds, medians: medians(earlierRounds) },
    target: { tableWithRollupsUsAtMost: 15 },
    met: { tableWithRollups: headline.tableWithRollupsUs <= 15 },
    ...(process.env.BENCH_REPLICAS === '0' ? {} : { onThreeReplicas: await replicasRounds(ROUNDS, SCANS) }),
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('scan-storage', result);
} finally {
  await server.exec(sql`DROP DATABASE IF EXISTS ${ident(DATABASE)}`).catch(() => undefined);
  await clickhouse.close();
  await server.close();
}
