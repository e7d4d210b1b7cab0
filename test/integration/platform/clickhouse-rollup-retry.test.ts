// The rollups of scans on three ClickHouse replicas of this file's own (test/support/clickhouse-replicas.ts),
// written as the scan sink writes them: into the Null table scans_input, whose views store each block in
// scans and in every rollup, each Replicated target deduplicating its own blocks (migration 009,
// idempotent-sink.ts). Every rollup on every replica counts every scan once:
// - two scans stored by two inserts whose rollup rows are alike (same workspace, hour and values):
//   without block_mark the rollups took the second block for a retry of the first and dropped it;
// - an insert cut after some views stored its block (a view of this file's own throws, as a server
//   killed there would stop): the table's own view comes last, so scans does not have the block yet,
//   and the sink's next try sends the same block, which only the targets without it take;
// - the replica taking the sink's inserts killed with kill -9 under them, at random moments
//   (CH_ROLLUP_CUTS=<file> writes what each kill left).
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { SCAN_COLUMNS, SCANS_TABLE } from '../../../src/links/scans/scan-sink.ts';
import type { ActorMessage, BatchWorkerKind } from '../../../src/platform/actors/worker-kind.ts';
import type { ClickHouse } from '../../../src/platform/clickhouse/client.ts';
import { idempotentSinkKind } from '../../../src/platform/clickhouse/idempotent-sink.ts';
import type { Pool } from '../../../src/platform/postgres/pool.ts';
import { scansTopic } from '../../../topics/scans.ts';
import { REPLICAS, type Replica, type TestReplicas } from '../../support/clickhouse-replicas.ts';
import { startReplicatedStores, type ReplicatedStores } from '../../support/replicated-stores.ts';
import { ROLLUP_TABLES, rollupCounts, rollupCountsQuery } from '../../support/links/rollup-counts.ts';

const DATABASE = 'rollup_retry';
let stores: ReplicatedStores | undefined;
let replicas: TestReplicas;
let ch: ClickHouse;
let pg: Pool;
let sink: BatchWorkerKind<ScanEvent>;

beforeAll(async () => {
  stores = await startReplicatedStores(DATABASE);
  ({ replicas, ch, pg } = stores);
  // The scan sink's storing part, without its scan limits (scan-sink.ts).
  sink = idempotentSinkKind<ScanEvent>(ch, pg, { kind: `rollup-retry-${randomUUID()}`, topic: scansTopic, ...SCANS_TABLE, columns: SCAN_COLUMNS, insertChunk: 20_000 });
}, 120_000);

afterAll(async () => stores?.release(), 60_000);

/** `n` scans of the workspace in the hour before now, each its own visitor, every one with a variant and a QR trigger (so every rollup counts each). */
function scans(workspaceId: string, n: number, alike = false): ScanEvent[] {
  const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000;
  return Array.from({ length: n }, (_, i) => ({
    scanId: randomUUID(), clickId: 'c', workspaceId, linkId: '00000000-0000-4000-8000-000000000001', shortId: 'retry', campaignId: null,
    timestamp: hour + (alike ? 0 : (i * 997) % 3_600_000), destination: 'https://example.com/retry',
    country: alike ? 'DE' : ['DE', 'US', 'FR'][i % 3]!, region: null, city: null, device: 'mobile', os: 'iOS', browser: 'Safari', isBot: false,
    referrer: null, referrerHost: null, utmSource: null, utmMedium: null, utmCampaign: null, utmTerm: null, utmContent: null,
    userAgent: null, visitorId: alike ? 'one-visitor' : `v-${randomUUID()}`, variant: 'https://example.com/b', trigger: 'qr',
  }));
}

/** A batch as the runtime hands it over: one partition's messages. */
const batch = (events: ScanEvent[]): ActorMessage<ScanEvent>[] =>
  events.map((value, i) => ({ topic: 'scans', partition: 0, offset: String(i), key: value.workspaceId, value, timestamp: value.timestamp, headers: {} }));

/** What each rollup counts of the workspace's scans on one replica, after it fetched every part. */
async function countsOn(replica: Replica, workspaceIds: string[]) {
  for (const table of ROLLUP_TABLES) await replicas.query(replica, `SYSTEM SYNC REPLICA ${DATABASE}.${table}`);
  return rollupCounts(await replicas.query(replica, rollupCountsQuery(DATABASE, workspaceIds)));
}

/** On every replica, every rollup counts the workspace's `n` scans once. */
async function everyRollupCounts(workspaceIds: string[], n: number) {
  for (const replica of REPLICAS) {
    const { counts, wrong } = await countsOn(replica, workspaceIds);
    expect({ replica, scans: counts.scans, wrong }).toEqual({ replica, scans: n, wrong: [] });
  }
}

it('counts two scans stored by two inserts whose rollup rows are alike twice, in every rollup on every replica', async () => {
  const workspaceId = randomUUID();
  const [first, second] = scans(workspaceId, 2, true) as [ScanEvent, ScanEvent];
  await sink.handleBatch(batch([first]));
  await sink.handleBatch(batch([second]));
  await everyRollupCounts([workspaceId], 2);
  // And the same batch handed over again (a replay) adds nothing.
  await sink.handleBatch(batch([first, second]));
  await everyRollupCounts([workspaceId], 2);
}, 60_000);

it('completes an insert cut after some views stored its block: its retry sends the same block, which only the targets without it take', async () => {
  const workspaceId = randomUUID();
  const events = scans(workspaceId, 3000);
  // On the replica that takes the writes, a view that fails while cut_switch has a row, named to run
  // after scans_country_* and scans_dims_mv and before scans_link_*, scans_visitors_mv and store_scans_mv.
  await replicas.query(1, `CREATE TABLE ${DATABASE}.cut_switch (on UInt8) ENGINE = Memory`);
  await replicas.query(1, `CREATE TABLE ${DATABASE}.cut_sink (scan_id String) ENGINE = Memory`);
  await replicas.query(1, `CREATE MATERIALIZED VIEW ${DATABASE}.scans_l_cut_mv TO ${DATABASE}.cut_sink AS SELECT scan_id FROM ${DATABASE}.scans_input WHERE throwIf((SELECT count() FROM ${DATABASE}.cut_switch) > 0) = 0`);
  try {
    await replicas.query(1, `INSERT INTO ${DATABASE}.cut_switch VALUES (1)`);
    await expect(sink.handleBatch(batch(events))).rejects.toThrow(/395|throwIf/);
    // Cut: the rollups before the failing view have the block, the others and scans not.
    const cut = await countsOn(2, [workspaceId]);
    expect(cut.counts).toMatchObject({ scans: 0, scans_country_dims: 3000, scans_dims: 3000, scans_link_dims: 0, scans_link_dims_daily: 0, scans_link_triggers: 0, scans_link_variants: 0, scans_visitors: 0 });
    await replicas.query(1, `TRUNCATE TABLE ${DATABASE}.cut_switch`);
    // The runtime hands the batch over again.
    await sink.handleBatch(batch(events));
    await everyRollupCounts([workspaceId], 3000);
  } finally {
    await replicas.query(1, `DROP TABLE IF EXISTS ${DATABASE}.scans_l_cut_mv`);
    await replicas.query(1, `DROP TABLE IF EXISTS ${DATABASE}.cut_sink`);
    await replicas.query(1, `DROP TABLE IF EXISTS ${DATABASE}.cut_switch`);
  }
}, 60_000);

/** Until replica 1 runs an insert into scans_input (at most 10 s), or `handling` ended first. */
async function insertRunning(handling: Promise<unknown>): Promise<void> {
  let ended = false;
  void handling.then(() => (ended = true));
  for (const end = Date.now() + 10_000; !ended && Date.now() < end; await new Promise((r) => setTimeout(r, 5))) {
    const running = await replicas.query(1, "SELECT count() FROM system.processes WHERE query LIKE 'INSERT INTO%scans_input%' AND query NOT LIKE '%system.processes%'");
    if (running.trim() !== '0') return;
  }
}

it('loses no scan from any rollup when the replica taking the inserts is killed under them', async () => {
  const workspaceId = randomUUID();
  const cuts: string[] = [];
  let stored = 0;
  for (let round = 0; round < 5; round++) {
    const events = scans(workspaceId, 20_000);
    const handling = sink.handleBatch(batch(events)).then(() => undefined, (err: Error) => err);
    // Killed at a random moment of its insert (seen running on the replica), while its views run.
    await insertRunning(handling);
    await new Promise((r) => setTimeout(r, Math.random() * 400));
    await replicas.kill(1);
    const failed = await handling;
    if (failed) {
      // What the kill left on the others (a cut between targets, or nothing; replica 2 as it is, not
      // synced, so a part it has yet to fetch counts as missing), then the runtime's retries.
      const left = rollupCounts(await replicas.query(2, rollupCountsQuery(DATABASE, [workspaceId]))).counts;
      const fed = ['scans_country_dims', 'scans_dims', 'scans_link_dims', 'scans_link_dims_daily', 'scans_link_triggers', 'scans_link_variants', 'scans'].map((t) => `${t} ${left[t]! - stored}`);
      cuts.push(`round ${round}: on replica 2 before the retry ${fed.join(', ')} (${failed.message.slice(0, 80)})`);
      const restarting = new Promise((r) => setTimeout(r, 3000)).then(() => replicas.restart());
      const end = Date.now() + 90_000;
      for (;;) {
        try {
          await sink.handleBatch(batch(events));
          break;
        } catch (err) {
          if (Date.now() > end) throw err;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      await restarting;
    } else {
      cuts.push(`round ${round}: stored before the kill`);
      await replicas.restart();
    }
    stored += events.length;
  }
  // CH_ROLLUP_CUTS=<file>: what each kill left (the test's console is silent when it passes).
  if (process.env.CH_ROLLUP_CUTS) writeFileSync(process.env.CH_ROLLUP_CUTS, `${cuts.join('\n')}\n`);
  await everyRollupCounts([workspaceId], stored);
}, 240_000);
