// The mail sender against its ceiling and against a bare nodemailer loop.
//   1. At the default platform rate (12/s): 60 s (BENCH_SECONDS) of a backlog going out through one
//      sender process; messages per second at the sink (p50, p99, max; also the busiest sliding
//      second) and the sender's CPU per message.
//   2. With the rate raised by configuration (MAIL_SEND_RATE_PER_SEC=10000, 8 hand-overs at once,
//      8 organizations): the most one sender process hands over per second, against a bare
//      nodemailer loop (bench/baseline-nodemailer-loop.ts: the same message, DKIM-signed, 8 at a
//      time) to the same sink, in alternating rounds; CPU per message of each.
// The sink is an SMTP server in this process that counts arrivals. Results: bench/results/sender.json.
// Run: node bench/sender.bench.ts
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { BENCH_ENV, deleteRunResources, freePort, medianBy, processCpuMs, start, writeResult, type Proc } from './lib.ts';

const CEILING_SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const MAX_SECONDS = 10;
const ROUNDS = 2;

const arrivals: number[] = [];
const sink = new SMTPServer({
  authOptional: true, disabledCommands: ['STARTTLS'], hideSTARTTLS: true, logger: false,
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.on('end', () => {
      arrivals.push(Date.now());
      callback(null, 'ok');
    });
  },
});
sink.on('error', () => {}); // a connection reset by a stopped sender
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const sinkUrl = `smtp://127.0.0.1:${(sink.server.address() as AddressInfo).port}`;

const admin = { authorization: `Bearer ${BENCH_ENV.ADMIN_TOKEN}`, 'content-type': 'application/json' };
async function post(url: string, body: unknown, headers: Record<string, string> = admin): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** An organization with a verified domain and a key; queues `count` messages in batches of 100. */
async function backlog(base: string, count: number): Promise<void> {
  const org = await post(`${base}/admin/v1/organizations`, { name: 'bench', plan: 'pro', daily_send_cap: 0 });
  const { key } = await post(`${base}/admin/v1/organizations/${org.id}/keys`, { name: 'bench', kind: 'full', rate_limit: 1000 });
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const domain = await post(`${base}/api/v1/domains`, { name: `b${Math.random().toString(36).slice(2, 10)}.example.com` }, auth);
  await post(`${base}/admin/v1/domains/${domain.id}/verify`, {});
  for (let sent = 0; sent < count; sent += 100) {
    const batch = Array.from({ length: Math.min(100, count - sent) }, (_, i) => ({ from: `Bench <news@${domain.name}>`, to: [`reader-${sent + i}@example.net`], subject: 'Hello', html: '<p>Hello from the benchmark</p>', text: 'Hello from the benchmark' }));
    await post(`${base}/emails/batch`, batch, auth);
    await new Promise((r) => setTimeout(r, 1000)); // one batch per key and second
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Arrivals per whole second in [from, to), and the busiest sliding second. */
function perSecond(from: number, to: number) {
  const inRange = arrivals.filter((t) => t >= from && t < to);
  const buckets = Array.from({ length: Math.floor((to - from) / 1000) }, (_, i) => inRange.filter((t) => t >= from + i * 1000 && t < from + (i + 1) * 1000).length).sort((a, b) => a - b);
  const busiest = Math.max(0, ...inRange.map((t, i) => inRange.slice(i).filter((u) => u < t + 1000).length));
  return { messages: inRange.length, p50: percentile(buckets, 50), p99: percentile(buckets, 99), min: buckets[0] ?? 0, max: buckets.at(-1) ?? 0, busiestSlidingSecond: busiest };
}

/** Counts what `proc` (a sender) and the sink do over `seconds`. */
async function measure(proc: Proc, seconds: number) {
  const cpu0 = processCpuMs(proc.child.pid!);
  const from = Date.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const to = Date.now();
  const cpuMs = processCpuMs(proc.child.pid!) - cpu0;
  const counts = perSecond(from, to);
  return { ...counts, perSecond: Number((counts.messages / ((to - from) / 1000)).toFixed(1)), cpuMsPerMessage: Number((cpuMs / Math.max(1, counts.messages)).toFixed(2)) };
}

async function bareLoop(seconds: number) {
  const before = arrivals.length;
  const proc = await start('bench/baseline-nodemailer-loop.ts', { SINK_URL: sinkUrl, SECONDS: String(seconds), CONCURRENCY: '8' }, '"sent"', (seconds + 60) * 1000);
  const line = JSON.parse(proc.output().trim().split('\n').filter((l) => l.startsWith('{')).at(-1)!) as { sent: number; seconds: number; cpuMs: number };
  await proc.stop();
  return { messages: arrivals.length - before, perSecond: Number((line.sent / line.seconds).toFixed(1)), cpuMsPerMessage: Number((line.cpuMs / Math.max(1, line.sent)).toFixed(2)) };
}

const topicPrefix = `bench-sender-${Date.now()}`;
const ingressPort = freePort();
const base = `http://127.0.0.1:${ingressPort}`;
// The benchmark's volumes are far above the daily allowances of a new domain and of the platform.
const common = { TOPIC_PREFIX: topicPrefix, SMTP_URL: sinkUrl, MAIL_WARMUP_STAGES: '100000000', PLATFORM_DAILY_SEND_CAP: '100000000' };
console.log('starting the ingress…');
const ingress = await start('src/main.ts', { ...common, HTTP_PORT: String(ingressPort), PUBLIC_BASE_URL: base }, 'ingress listening');
let sender: Proc | undefined;
try {
  // The bench database is kept between runs: what an earlier run left queued would go out now.
  const db = new pg.Client({ connectionString: BENCH_ENV.DATABASE_URL });
  await db.connect();
  await db.query("DELETE FROM mail_deliveries WHERE state IN ('queued', 'sending', 'retrying')");
  await db.end();
  // 1. The ceiling: a backlog larger than a minute at 12/s.
  console.log('queueing the backlog…');
  await backlog(base, Math.ceil(CEILING_SECONDS * 12 * 1.3));
  sender = await start('workers/mail-sender.ts', common, 'worker process ready');
  await new Promise((r) => setTimeout(r, 5000)); // past the start
  console.log(`measuring ${CEILING_SECONDS} s at the default rate…`);
  const ceiling = await measure(sender, CEILING_SECONDS);
  console.log(JSON.stringify(ceiling));
  await sender.stop();

  // 2. The maximum, the rate raised, against the bare loop.
  console.log('queueing for the maximum…');
  for (let i = 0; i < 8; i++) await backlog(base, 800);
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const bare = await bareLoop(MAX_SECONDS);
    sender = await start('workers/mail-sender.ts', { ...common, MAIL_SEND_RATE_PER_SEC: '10000', MAIL_SEND_CONCURRENCY: '8' }, 'worker process ready');
    await new Promise((r) => setTimeout(r, 3000));
    const ours = await measure(sender, MAX_SECONDS);
    await sender.stop();
    rounds.push({ bare, sender: ours, ratio: Number((ours.perSecond / bare.perSecond).toFixed(3)) });
    console.log(`round ${round + 1}: bare loop ${bare.perSecond}/s (${bare.cpuMsPerMessage} ms CPU/msg); sender ${ours.perSecond}/s (${ours.cpuMsPerMessage} ms CPU/msg)`);
  }
  const result = {
    benchmark: 'sender',
    ceiling: { seconds: CEILING_SECONDS, rateLimit: 12, ...ceiling },
    maximum: { seconds: MAX_SECONDS, rounds, ratio: medianBy(rounds, (r) => r.ratio).ratio },
    met: { neverAbove12InASecond: ceiling.busiestSlidingSecond <= 12 },
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('sender', result);
} finally {
  await sender?.stop();
  await ingress.stop();
  sink.close();
  await deleteRunResources(topicPrefix);
}
