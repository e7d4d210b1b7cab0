// Throughput with 1, 2 and 3 worker processes sharing a consumer group (issue 41), as ratios to one
// process measured in the same run, in alternating rounds (the machine's speed drifts):
//   - the scan sink (`workers/run.ts links-scan-sink`): a backlog of SCANS scans on `scans` (six
//     partitions, spread over 24 workspaces), published while the N processes, which hold all six
//     partitions between them, are stopped, then drained into ClickHouse once they are resumed
//     together: scans per second from the resume until every scan is stored;
//   - the broadcast fan-out (`workers/run.ts mail-broadcasts`): BROADCASTS broadcasts of AUDIENCE
//     contacts sent at once once the N processes hold all of mail.commands' partitions; recipients per
//     second from the first send until every broadcast is `sent`. One broadcast is one actor (one
//     partition, one process at a time), so processes only share out whole broadcasts.
// This machine has two cores, shared by the processes, Kafka, Postgres and ClickHouse: more
// processes add no CPU here, they show what sharing a group costs and whether anything serialises.
// Results: bench/results/worker-processes.json.   Run: node bench/worker-processes.bench.ts
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import pg from 'pg';
import { createClickHouse } from '../src/platform/clickhouse/client.ts';
import { inStrings, sql } from '../src/platform/clickhouse/literal.ts';
import { loadConfig } from '../src/platform/config.ts';
import type { ScanEvent } from '../src/links/scans/scan-event.ts';
import { startPlatform } from '../src/platform/platform.ts';
import { serviceTopics } from '../src/service.ts';
import { scansTopic } from '../topics/scans.ts';
import { BENCH_ENV, deleteRunResources, freePort, medianBy, start, writeResult, type Proc } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PROCESSES = [1, 2, 3];
const SCANS = Number(process.env.BENCH_SCANS ?? 150_000);
const BROADCASTS = 12;
const AUDIENCE = 2500;

const topicPrefix = `bench-workers-${Date.now()}`;
const env = { TOPIC_PREFIX: topicPrefix };
const config = loadConfig({ ...process.env, ...BENCH_ENV, ...env });
const clickhouse = createClickHouse(config);
const db = new pg.Pool({ connectionString: BENCH_ENV.DATABASE_URL, max: 2 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The machine's one-minute load average at the end of a measurement: other work on its two cores shows there. */
const load1 = () => Number(loadavg()[0]!.toFixed(1));

/** N worker processes of `kind`, and their operations ports. */
async function workers(kind: string, n: number, extra: Record<string, string> = {}): Promise<{ procs: Proc[]; operations: string[] }> {
  const procs = await Promise.all(Array.from({ length: n }, () => start('workers/run.ts', { ...env, ...extra }, 'worker process ready', 180_000, [kind])));
  const operations = procs.map((p) => JSON.parse(p.output().split('\n').find((l) => l.includes('metrics listening'))!).url as string);
  return { procs, operations };
}

/** Until the processes together hold every one of the topic's six partitions, each once (at most two minutes). */
async function covering(operations: string[], topic: string): Promise<void> {
  const name = `${topicPrefix}.${topic}`;
  const end = Date.now() + 120_000;
  for (;;) {
    const held = (await Promise.all(operations.map(async (url) => {
      const body = (await (await fetch(`${url}/readyz`)).json()) as { consumers: { partitions: Record<string, number[]> }[] };
      return body.consumers.flatMap((c) => c.partitions[name] ?? []);
    }))).flat();
    if (held.length === 6 && new Set(held).size === 6) return;
    if (Date.now() > end) throw new Error(`${topic}: partitions never covered (${JSON.stringify(held)})`);
    await sleep(100);
  }
}

// --- the scan sink ---

function scanOf(workspaceId: string, now: number): ScanEvent {
  const scanId = randomUUID();
  return {
    scanId, clickId: `${scanId}.sig`, workspaceId, linkId: randomUUID(), shortId: 'bench', campaignId: null, timestamp: now,
    destination: 'https://example.com/landing', country: 'DE', region: null, city: null, device: 'desktop', os: 'Linux', browser: 'Firefox',
    isBot: false, referrer: null, referrerHost: null, utmSource: null, utmMedium: null, utmCampaign: null, utmTerm: null, utmContent: null,
    visitorId: `v${Math.floor(Math.random() * 50_000)}`, userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  };
}

const stored = async (workspaces: string[]) =>
  Number((await clickhouse.rows<{ n: string }>(sql`SELECT count() AS n FROM scans WHERE workspace_id IN ${inStrings(workspaces)}`))[0]!.n);

async function scanSink(n: number, platform: Awaited<ReturnType<typeof startPlatform>>) {
  // The N sinks join first, and are stopped (SIGSTOP) while the backlog is published, so that all N
  // start on it at once: otherwise the first to join drains much of it alone. Their Kafka session
  // outlasts the pause.
  const { procs, operations } = await workers('links-scan-sink', n, { ACTOR_SESSION_TIMEOUT_MS: '120000' });
  try {
    await covering(operations, 'scans');
    for (const p of procs) p.child.kill('SIGSTOP');
    // A backlog of its own (24 workspaces: every partition gets some).
    const workspaces = Array.from({ length: 24 }, () => randomUUID());
    const now = Date.now();
    for (let i = 0; i < SCANS; i += 5000) {
      await platform.publisher.publish(scansTopic, Array.from({ length: Math.min(5000, SCANS - i) }, (_, j) => {
        const value = scanOf(workspaces[(i + j) % workspaces.length]!, now);
        return { key: value.workspaceId, value };
      }));
    }
    const t0 = performance.now();
    for (const p of procs) p.child.kill('SIGCONT');
    let count = 0;
    while (count < SCANS) {
      if (performance.now() - t0 > 300_000) throw new Error(`scan sink: ${count} of ${SCANS} after 5 minutes`);
      await sleep(100);
      count = await stored(workspaces);
    }
    const seconds = (performance.now() - t0) / 1000;
    if (count !== SCANS) throw new Error(`scan sink: ${count} rows for ${SCANS} scans`);
    return { processes: n, scans: SCANS, seconds: Number(seconds.toFixed(2)), perSecond: Math.round(SCANS / seconds), loadAverage: load1() };
  } finally {
    for (const p of procs) p.child.kill('SIGCONT');
    await Promise.all(procs.map((p) => p.stop()));
  }
}

// --- the fan-out ---

const admin = { authorization: `Bearer ${BENCH_ENV.ADMIN_TOKEN}`, 'content-type': 'application/json' };
async function request(url: string, method: string, body?: unknown, headers: Record<string, string> = admin, raw?: string): Promise<any> {
  const res = await fetch(url, { method, headers, ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}) });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** An organization with a verified domain, a topic `news` and AUDIENCE contacts. */
async function organization(base: string) {
  const org = await request(`${base}/admin/v1/organizations`, 'POST', { name: 'bench', plan: 'pro', daily_send_cap: 0 });
  const { key } = await request(`${base}/admin/v1/organizations/${org.id}/keys`, 'POST', { name: 'bench', kind: 'full', rate_limit: 1000 });
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const domain = await request(`${base}/api/v1/domains`, 'POST', { name: `b${Math.random().toString(36).slice(2, 10)}.example.com` }, auth);
  await request(`${base}/admin/v1/domains/${domain.id}/verify`, 'POST', {});
  await request(`${base}/api/v1/topics`, 'POST', { slug: 'news', name: 'News', default_subscription: 'opt_in' }, auth);
  const lines = Array.from({ length: AUDIENCE }, (_, i) => JSON.stringify({ email: `reader-${i}@example.net`, first_name: `Reader ${i}` })).join('\n');
  await request(`${base}/api/v1/contacts/import`, 'POST', undefined, { ...auth, 'content-type': 'application/x-ndjson' }, lines);
  return { id: org.id as string, auth, from: `News <news@${domain.name}>` };
}
type Org = Awaited<ReturnType<typeof organization>>;

async function fanOut(n: number, base: string, org: Org) {
  const { procs, operations } = await workers('mail-broadcasts', n);
  try {
    await covering(operations, 'mail.commands');
    const body = { name: 'bench', from: org.from, topic: 'news', subject: 'Hello {{contact.first_name}}', html: '<p>Hello {{contact.first_name}}, here is the news.</p>', text: 'Hello {{contact.first_name}}' };
    const ids: string[] = [];
    for (let i = 0; i < BROADCASTS; i++) ids.push((await request(`${base}/api/v1/broadcasts`, 'POST', body, org.auth)).id);
    const t0 = performance.now();
    await Promise.all(ids.map((id) => request(`${base}/api/v1/broadcasts/${id}/send`, 'POST', {}, org.auth)));
    let queued = 0;
    for (;;) {
      if (performance.now() - t0 > 300_000) throw new Error('fan-out did not finish in 5 minutes');
      await sleep(100);
      const all = await Promise.all(ids.map((id) => request(`${base}/api/v1/broadcasts/${id}`, 'GET', undefined, org.auth)));
      if (all.every((b) => b.status === 'sent')) {
        queued = all.reduce((sum, b) => sum + b.stats.queued, 0);
        break;
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    if (queued !== BROADCASTS * AUDIENCE) throw new Error(`fan-out: ${queued} recipients queued of ${BROADCASTS * AUDIENCE}`);
    // Keep the bench database small: the messages go (nothing sends them).
    await db.query("DELETE FROM mail_messages WHERE organization_id = $1 AND kind = 'broadcast.news'", [org.id]);
    return { processes: n, recipients: queued, seconds: Number(seconds.toFixed(2)), perSecond: Math.round(queued / seconds), loadAverage: load1() };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
  }
}

const port = freePort();
const base = `http://127.0.0.1:${port}`;
console.log('starting the ingress…');
const ingress = await start('src/main.ts', { ...env, HTTP_PORT: String(port), PUBLIC_BASE_URL: base }, 'ingress listening');
const platform = await startPlatform(config, { name: 'bench', topics: serviceTopics, migrate: false });
try {
  const org = await organization(base);
  const rounds: { scanSink: Awaited<ReturnType<typeof scanSink>>[]; fanOut: Awaited<ReturnType<typeof fanOut>>[] }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order, so neither end of a round always gets the machine's slower moments.
    const order = round % 2 === 0 ? PROCESSES : [...PROCESSES].reverse();
    const r = { scanSink: [] as Awaited<ReturnType<typeof scanSink>>[], fanOut: [] as Awaited<ReturnType<typeof fanOut>>[] };
    for (const n of order) {
      const sink = await scanSink(n, platform);
      const fan = await fanOut(n, base, org);
      console.log(`round ${round + 1}, ${n} process(es): scan sink ${sink.perSecond}/s; fan-out ${fan.perSecond}/s`);
      r.scanSink.push(sink);
      r.fanOut.push(fan);
    }
    r.scanSink.sort((a, b) => a.processes - b.processes);
    r.fanOut.sort((a, b) => a.processes - b.processes);
    rounds.push(r);
  }
  // Per process count: the median round's figure, and its ratio to one process in that same round.
  const summary = (pick: (r: (typeof rounds)[number]) => { processes: number; perSecond: number }[]) =>
    PROCESSES.map((n, i) => {
      const ratios = rounds.map((r) => ({ perSecond: pick(r)[i]!.perSecond, ratio: Number((pick(r)[i]!.perSecond / pick(r)[0]!.perSecond).toFixed(2)) }));
      const median = medianBy(ratios, (x) => x.ratio);
      return { processes: n, perSecond: median.perSecond, ratioToOne: median.ratio, ratios: ratios.map((x) => x.ratio) };
    });
  const result = {
    benchmark: 'worker-processes',
    scans: SCANS,
    broadcasts: { count: BROADCASTS, audience: AUDIENCE },
    rounds,
    scanSink: summary((r) => r.scanSink),
    fanOut: summary((r) => r.fanOut),
  };
  console.log(JSON.stringify({ scanSink: result.scanSink, fanOut: result.fanOut }, null, 2));
  writeResult('worker-processes', result);
} finally {
  await platform.shutdown.run('bench done');
  await ingress.stop();
  await clickhouse.close();
  await db.end();
  await deleteRunResources(topicPrefix);
}
