// The broadcast fan-out: a topic of 100,000 contacts, from POST /send to `sent`
// (every recipient row written and every message queued: stored with its outbox row;
// no sender runs), in recipients per second and the worker's peak memory, against a
// bare `INSERT … SELECT` of the same 100,000 recipient rows in Postgres, in two
// alternating rounds. The worker's peak RSS is also measured on a 20,000-contact
// audience: memory that does not grow with the audience is the same peak for both.
// Last, GET /report against GET of the broadcast itself, for both audiences.
// Results: bench/results/broadcast.json. Run: node bench/broadcast.bench.ts
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { BENCH_ENV, deleteRunResources, freePort, medianBy, start, writeResult, type Proc } from './lib.ts';

const AUDIENCE = 100_000;
const SMALL = 20_000;
const ROUNDS = 2;

const admin = { authorization: `Bearer ${BENCH_ENV.ADMIN_TOKEN}`, 'content-type': 'application/json' };
async function request(url: string, method: string, body?: unknown, headers: Record<string, string> = admin, raw?: string): Promise<any> {
  const res = await fetch(url, { method, headers, ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}) });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** An organization with a verified domain, a topic `news` and `count` contacts. */
async function organization(base: string, count: number) {
  const org = await request(`${base}/admin/v1/organizations`, 'POST', { name: 'bench', plan: 'pro', daily_send_cap: 0 });
  const { key } = await request(`${base}/admin/v1/organizations/${org.id}/keys`, 'POST', { name: 'bench', kind: 'full', rate_limit: 1000 });
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const domain = await request(`${base}/api/v1/domains`, 'POST', { name: `b${Math.random().toString(36).slice(2, 10)}.example.com` }, auth);
  await request(`${base}/admin/v1/domains/${domain.id}/verify`, 'POST', {});
  await request(`${base}/api/v1/topics`, 'POST', { slug: 'news', name: 'News', default_subscription: 'opt_in' }, auth);
  const lines = Array.from({ length: count }, (_, i) => JSON.stringify({ email: `reader-${i}@example.net`, first_name: `Reader ${i}`, properties: { n: i } })).join('\n');
  await request(`${base}/api/v1/contacts/import`, 'POST', undefined, { ...auth, 'content-type': 'application/x-ndjson' }, lines);
  return { id: org.id as string, auth, from: `News <news@${domain.name}>` };
}
type Org = Awaited<ReturnType<typeof organization>>;

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** One fan-out through the worker: seconds from send to sent, and the worker's peak RSS meanwhile. */
async function fanOut(base: string, org: Org, worker: Proc, db: pg.Pool) {
  const b = await request(`${base}/api/v1/broadcasts`, 'POST', { name: 'bench', from: org.from, topic: 'news', subject: 'Hello {{contact.first_name}}', html: '<p>Hello {{contact.first_name}}, here is the news.</p>', text: 'Hello {{contact.first_name}}' }, org.auth);
  const rssBefore = rssMb(worker.child.pid!);
  let peak = rssBefore;
  const t0 = performance.now();
  await request(`${base}/api/v1/broadcasts/${b.id}/send`, 'POST', {}, org.auth);
  let status = '';
  let stats: any;
  while (status !== 'sent') {
    if (performance.now() - t0 > 600_000) throw new Error('fan-out did not finish in 10 minutes');
    await new Promise((r) => setTimeout(r, 100));
    peak = Math.max(peak, rssMb(worker.child.pid!));
    ({ status, stats } = await request(`${base}/api/v1/broadcasts/${b.id}`, 'GET', undefined, org.auth));
  }
  const seconds = (performance.now() - t0) / 1000;
  // Keep the bench database small: the broadcast's messages go (nothing sends them).
  await db.query("DELETE FROM mail_messages WHERE organization_id = $1 AND kind = 'broadcast.news'", [org.id]);
  return { id: b.id as string, recipients: stats.queued as number, seconds: Number(seconds.toFixed(2)), perSecond: Math.round(stats.queued / seconds), rssBeforeMb: Math.round(rssBefore), peakRssMb: Math.round(peak) };
}

/** Median milliseconds of `count` sequential GETs of the broadcast's report, and of the broadcast itself (the baseline). */
async function reportLatency(base: string, org: Org, broadcastId: string, count = 200) {
  const timed = async (path: string) => {
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      await request(`${base}${path}`, 'GET', undefined, org.auth);
      times.push(performance.now() - t0);
    }
    return Number(times.sort((a, b) => a - b)[Math.floor(count / 2)]!.toFixed(2));
  };
  const get = await timed(`/api/v1/broadcasts/${broadcastId}`);
  const report = await timed(`/api/v1/broadcasts/${broadcastId}/report`);
  return { getMs: get, reportMs: report };
}

/** The baseline: the same recipient rows by one INSERT … SELECT (then removed). */
async function bareInsert(base: string, org: Org, db: pg.Pool) {
  const b = await request(`${base}/api/v1/broadcasts`, 'POST', { name: 'baseline', from: org.from, topic: 'news', subject: 'x', text: 'x' }, org.auth);
  const t0 = performance.now();
  const { rowCount } = await db.query(
    "INSERT INTO mail_broadcast_recipients (broadcast_id, contact_id, state) SELECT $1, c.id, 'queued' FROM mail_contacts c WHERE c.organization_id = $2",
    [b.id, org.id],
  );
  const seconds = (performance.now() - t0) / 1000;
  await db.query('DELETE FROM mail_broadcast_recipients WHERE broadcast_id = $1', [b.id]);
  return { recipients: rowCount ?? 0, seconds: Number(seconds.toFixed(2)), perSecond: Math.round((rowCount ?? 0) / seconds) };
}

const topicPrefix = `bench-broadcast-${Date.now()}`;
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const common = { TOPIC_PREFIX: topicPrefix };
const db = new pg.Pool({ connectionString: BENCH_ENV.DATABASE_URL, max: 2 });
console.log('starting the ingress…');
const ingress = await start('src/main.ts', { ...common, HTTP_PORT: String(port), PUBLIC_BASE_URL: base }, 'ingress listening');
let worker: Proc | undefined;
try {
  console.log(`importing ${AUDIENCE} and ${SMALL} contacts…`);
  const big = await organization(base, AUDIENCE);
  const small = await organization(base, SMALL);
  worker = await start('workers/mail-broadcasts.ts', common, 'worker process ready');
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const bare = await bareInsert(base, big, db);
    const ours = await fanOut(base, big, worker, db);
    rounds.push({ bare, fanOut: ours, ratio: Number((ours.perSecond / bare.perSecond).toFixed(3)) });
    console.log(`round ${round + 1}: bare INSERT … SELECT ${bare.perSecond}/s; fan-out ${ours.perSecond}/s (peak RSS ${ours.peakRssMb} MB)`);
  }
  const smaller = await fanOut(base, small, worker, db);
  console.log(`${SMALL} contacts: ${smaller.perSecond}/s, peak RSS ${smaller.peakRssMb} MB`);
  // The report reads counters: its latency is the same for both audiences, near a plain GET.
  const reports = { [AUDIENCE]: await reportLatency(base, big, rounds.at(-1)!.fanOut.id), [SMALL]: await reportLatency(base, small, smaller.id) };
  console.log(`report: ${JSON.stringify(reports)}`);
  const median = medianBy(rounds, (r) => r.fanOut.perSecond);
  const result = {
    benchmark: 'broadcast',
    audience: AUDIENCE,
    rounds,
    recipientsPerSecond: median.fanOut.perSecond,
    ratio: median.ratio,
    memory: { [`peakRssMb${AUDIENCE}`]: Math.max(...rounds.map((r) => r.fanOut.peakRssMb)), [`peakRssMb${SMALL}`]: smaller.peakRssMb },
    reportMedianMs: reports,
    met: { atLeast5000PerSecond: median.fanOut.perSecond >= 5000 },
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('broadcast', result);
} finally {
  await worker?.stop();
  await ingress.stop();
  await db.end();
  await deleteRunResources(topicPrefix);
}
