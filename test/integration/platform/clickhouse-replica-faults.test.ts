// The service on three ClickHouse replicas of this file's own (over a ZooKeeper ensemble of three,
// test/support/clickhouse-replicas.ts) while they fail under load: during 3,000 redirects and a stream
// of conversions, one replica is killed with kill -9 (and started again later), then another is
// stopped with SIGSTOP for 20 s, then a ZooKeeper node is killed. Every redirect answers 302; the
// analytics API and the export answer throughout (from the live replicas); after recovery every scan
// and every conversion is on every replica exactly once (SYSTEM SYNC REPLICA, then counts and
// distinct ids), every rollup counts every scan once there too (rollup-counts.ts: an insert cut on a
// killed server between its views is completed by the sink's retry, idempotent-sink.ts), and the
// killed replica caught up by itself.
// An ingress in this process and one worker process with the two sinks, on the file's own databases.
// CH_FAULTS_COSTS=<file> writes what each fault cost (docs/operations.md quotes a run).
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import { createLogger } from '../../../src/platform/logger.ts';
import { migrateAll } from '../../../src/platform/migrations.ts';
import { REPLICAS, startTestReplicas, type Replica, type TestReplicas } from '../../support/clickhouse-replicas.ts';
import { eventually, testConfig, useDatabasesOfThisFile } from '../../support/env.ts';
import { freshDatabases } from '../../support/fresh-databases.ts';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { redirectLoad } from '../../support/links/redirect-load.ts';
import { ROLLUP_TABLES, rollupCounts, rollupCountsQuery } from '../../support/links/rollup-counts.ts';
import { scan } from '../../support/links/scans.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { startTs, stopChild, waitForOutput, type Child } from '../../support/processes.ts';

const REDIRECTS = 3000;
const STOP_MS = 20_000;
/** Slowest answer allowed of the analytics API and the export while replicas fail: a hung one is left within 2 s. */
const ANSWER_BOUND_MS = 5000;
/** Longest the sink may stand still after a fault (the hang's 20 s included, when its insert was on the hung replica). */
const SINK_STALL_BOUND_MS = 45_000;

const own = freshDatabases('chfaults');
let replicas: TestReplicas;
let ingress: TestIngress;
let workers: Child;

beforeAll(async () => {
  replicas = await startTestReplicas();
  useDatabasesOfThisFile({ ...own.databaseEnv(), ...replicas.env });
  const config = testConfig();
  await migrateAll(config, createLogger(config, 'test-clickhouse-replica-faults'));
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  workers = startTs('workers/run.ts', ['links-scan-sink', 'links-conversion-sink'], { LOG_LEVEL: 'info', METRICS_PORT: '0' });
  await waitForOutput(workers, 'worker process ready', 90_000);
}, 180_000);

afterAll(async () => {
  await stopChild(workers);
  await ingress?.close();
  if (replicas) {
    await replicas.restart().catch(() => undefined);
    await own.drop();
    useDatabasesOfThisFile(undefined);
    await replicas.release();
  }
}, 120_000);

interface Workspace {
  workspaceId: string;
  key: string;
  shortId: string;
}

/** Two workspaces (batched together by the sinks), a link each. */
async function workspaces(): Promise<Workspace[]> {
  const made = await Promise.all([0, 1].map(async () => {
    const ws = await workspaceWithKey(ingress.url);
    const link = await call(ingress.url, 'POST', '/api/v1/links', { key: ws.key, body: { destination: 'https://shop.example.com/replicas' } });
    expect(link.status).toBe(201);
    return { workspaceId: ws.workspaceId, key: ws.key, shortId: link.body.shortId as string };
  }));
  await eventually(async () => made.every((w) => ingress.app.redirects.cache.get(w.shortId) !== undefined), 10_000, 20);
  return made;
}

/** Conversions until `until` says stop: a scan of a link, then a purchase with its click ID, one at a time. */
function conversionStream(made: readonly Workspace[], until: () => boolean) {
  const ids: string[] = [];
  const statuses: Record<number, number> = {};
  let scans = 0;
  const done = (async () => {
    for (let n = 0; !until(); n++) {
      const w = made[n % made.length]!;
      const redirect = await scan(ingress.url, w.shortId);
      statuses[redirect.status] = (statuses[redirect.status] ?? 0) + 1;
      scans++;
      const tracked = await call(ingress.url, 'POST', '/api/v1/track', { key: w.key, body: { clickId: redirect.clickId, event: 'purchase', amount: 2.5, currency: 'EUR', externalId: `order-${n}` } });
      statuses[tracked.status] = (statuses[tracked.status] ?? 0) + 1;
      if (tracked.status === 201) ids.push(tracked.body.id as string);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return { done, ids, statuses, scans: () => scans };
}

/** The analytics API and the export, asked in turn until `until` says stop: their statuses and slowest answer. */
function apiProbe(made: readonly Workspace[], until: () => boolean) {
  const statuses: Record<string, number> = {};
  let slowestMs = 0;
  const from = new Date(Date.now() - 3_600_000).toISOString();
  const done = (async () => {
    for (let n = 0; !until(); n++) {
      const w = made[n % made.length]!;
      const path = n % 2 === 0 ? `/api/v1/analytics?from=${from}` : `/api/v1/analytics/export?format=csv&from=${from}&to=${new Date(Date.now() + 3_600_000).toISOString()}`;
      const start = Date.now();
      const res = await call(ingress.url, 'GET', path, { key: w.key });
      slowestMs = Math.max(slowestMs, Date.now() - start);
      const key = `${n % 2 === 0 ? 'analytics' : 'export'} ${res.status}`;
      statuses[key] = (statuses[key] ?? 0) + 1;
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return { done, statuses, slowestMs: () => slowestMs };
}

/**
 * The scans stored, sampled every 250 ms until `until` says stop (reads from any live replica): what
 * each fault costs is how long after it the count stays still, the sink held up.
 */
function storedSampler(until: () => boolean) {
  const samples: { at: number; n: number }[] = [];
  const done = (async () => {
    while (!until()) {
      const [row] = await ingress.platform.clickhouse.rows<{ n: string }>(sql`SELECT count() AS n FROM scans`).catch(() => [undefined]);
      if (row) samples.push({ at: Date.now(), n: Number(row.n) });
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  /** Milliseconds from `at` until the count grew past what it was then (undefined: it never did). */
  const stalledAfter = (at: number): number | undefined => {
    const before = samples.filter((x) => x.at <= at).at(-1)?.n ?? 0;
    const grown = samples.find((x) => x.at > at && x.n > before);
    return grown ? grown.at - at : undefined;
  };
  return { done, stalledAfter };
}

/** The ZooKeeper node that leads the ensemble (its `srvr` answer says so). */
async function zookeeperLeader(): Promise<Replica> {
  for (const node of REPLICAS) {
    const [host, port] = replicas.zookeeperOf(node).split(':');
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      const socket = connect(Number(port), host!, () => socket.end('srvr'));
      socket.on('data', (d) => (text += d)).on('close', () => resolve(text)).on('error', () => resolve(''));
    });
    if (/Mode: leader/.test(answer)) return node;
  }
  throw new Error('no ZooKeeper node says it leads');
}

/**
 * On one replica, after it caught up: rows and distinct ids of the workspaces' scans and conversions,
 * and the rollups that do not count every scan once.
 */
async function storedOn(replica: Replica, made: readonly Workspace[]): Promise<Record<string, number | string[]>> {
  const db = own.name;
  const ws = made.map((w) => `'${w.workspaceId}'`).join(', ');
  // A replica whose ZooKeeper session expired while it was hung (or while the leader was away) is read-only
  // until its restarting thread opens a new one; SYSTEM SYNC REPLICA then fails with "Session expired"
  // (code 999). Wait for the session, not for a time.
  await eventually(async () => (await replicas.query(replica, `SELECT count() FROM system.replicas WHERE database = '${db}' AND table IN (${[...ROLLUP_TABLES, 'conversions'].map((t) => `'${t}'`).join(', ')}) AND (is_readonly OR is_session_expired)`)).trim() === '0' || undefined, 60_000, 250);
  for (const table of [...ROLLUP_TABLES, 'conversions']) await replicas.query(replica, `SYSTEM SYNC REPLICA ${db}.${table}`);
  const answer = await replicas.query(replica, `
    SELECT (SELECT count() FROM ${db}.scans WHERE workspace_id IN (${ws})),
           (SELECT uniqExact(scan_id) FROM ${db}.scans WHERE workspace_id IN (${ws})),
           (SELECT count() FROM ${db}.conversions WHERE workspace_id IN (${ws})),
           (SELECT uniqExact(conversion_id) FROM ${db}.conversions WHERE workspace_id IN (${ws}))`);
  const [scans, scanIds, conversions, conversionIds] = answer.trim().split('\t').map(Number);
  const { wrong } = rollupCounts(await replicas.query(replica, rollupCountsQuery(db, made.map((w) => w.workspaceId))));
  return { scans: scans!, scanIds: scanIds!, conversions: conversions!, conversionIds: conversionIds!, rollupsWrong: wrong };
}

it('stores every scan and conversion once on every replica, in the table and every rollup, while replicas are killed and hung and a ZooKeeper node dies, and answers analytics throughout', async () => {
  const made = await workspaces();
  const redirects = redirectLoad(ingress.url, made.map((w) => w.shortId), { total: REDIRECTS, perRound: 15, everyMs: 300, boundMs: 150_000 });
  const loading = () => redirects.sent() >= REDIRECTS;
  const conversions = conversionStream(made, loading);
  const probe = apiProbe(made, loading);
  const reached = (n: number) => eventually(async () => redirects.sent() >= n, 120_000, 50);
  let sampling = true;
  const stored = storedSampler(() => !sampling);
  const faults: Record<string, number> = {};

  // kill -9 a replica: the first, which takes the writes while it serves.
  await reached(300);
  faults.killed = Date.now();
  await replicas.kill(1);
  // Started again a while later: it catches up by itself (replication's fetches).
  await reached(900);
  faults.restarted = Date.now();
  await replicas.restart();
  // Another hangs for 20 s (its ZooKeeper session outlives the stop: it still counts as live).
  await reached(1200);
  faults.hung = Date.now();
  replicas.pause(2);
  await new Promise((r) => setTimeout(r, STOP_MS));
  replicas.resume(2);
  // The ZooKeeper leader dies: the ensemble elects another; every replica's session moves.
  const leader = await zookeeperLeader();
  faults.zookeeperLeaderKilled = Date.now();
  await replicas.killZooKeeper(leader);
  expect(redirects.sent()).toBeLessThan(REDIRECTS);

  expect(await redirects.done).toEqual({ 302: REDIRECTS });
  await conversions.done;
  await probe.done;
  expect(conversions.statuses).toEqual({ 302: conversions.scans(), 201: conversions.scans() });
  expect(Object.keys(probe.statuses).sort()).toEqual(['analytics 200', 'export 200']);
  expect(probe.slowestMs()).toBeLessThan(ANSWER_BOUND_MS);

  // Everything stored, read through the service's client (sequentially consistent: every quorum insert).
  const scans = REDIRECTS + conversions.scans();
  const total = async () => {
    const [row] = await ingress.platform.clickhouse
      .rows<{ s: string; c: string }>(sql`SELECT (SELECT count() FROM scans) AS s, (SELECT count() FROM conversions) AS c`, { settings: { select_sequential_consistency: '1' } })
      // A replica not yet holding every quorum insert refuses (REPLICA_IS_NOT_IN_QUORUM): asked again.
      .catch(() => [{ s: '0', c: '0' }]);
    return Number(row!.s) >= scans && Number(row!.c) >= conversions.ids.length;
  };
  await eventually(total, 120_000, 1000);
  sampling = false;
  await stored.done;
  // What each fault cost the sink: how long the stored scans stood still after it (a killed replica
  // that took the writes: the insert in flight on it, then quorum inserts held until it is back;
  // a hung one: its insert left after 1.5 s; the ZooKeeper leader: an election, sessions moved).
  const stalls = Object.fromEntries(Object.entries(faults).map(([fault, at]) => [fault, stored.stalledAfter(at)]));
  for (const [fault, ms] of Object.entries(stalls)) expect(ms, fault).toBeLessThan(SINK_STALL_BOUND_MS);
  if (process.env.CH_FAULTS_COSTS) (await import('node:fs')).writeFileSync(process.env.CH_FAULTS_COSTS, JSON.stringify({ stalls, slowestAnswerMs: probe.slowestMs(), conversions: conversions.ids.length }));
  // The ZooKeeper node back too; then every replica holds each scan and conversion once.
  await replicas.restart();
  // Every replica read before any is compared: a failure shows what each one holds.
  const held = [];
  for (const replica of REPLICAS) held.push({ replica, ...(await storedOn(replica, made)) });
  expect(held).toEqual(REPLICAS.map((replica) => ({ replica, scans, scanIds: scans, conversions: conversions.ids.length, conversionIds: conversions.ids.length, rollupsWrong: [] })));
}, 180_000);
