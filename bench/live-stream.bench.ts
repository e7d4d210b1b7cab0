// Live scan streams under load (issue 54): one ingress holds 1,000 open streams
// (GET /api/v1/analytics/stream) while wrk sends it 2,000 redirects a second, against the same
// load with no stream open, in the same run, in ROUNDS alternating rounds.
//
// Streams: 10 Enterprise workspaces (100 streams each, the plan's limit) of 10 links each; per
// workspace 1 stream of all its scans, 49 of one link (about 5 per link) and 50 whose filter the
// load never matches (country=FR, device=tablet): each redirect is about 6 events written.
// wrk picks one of the 100 links at random for each redirect (-t1 -c50, a fixed 2,000/s).
// Figures:
// - addedIngressCpuPerRedirectMs: the ingress's CPU (every thread, /proc) per redirect with the
//   streams open minus without, over the load and 2 s after it (scans reach the streams later);
//   the ratio streams / none too. The machine's busy time is given beside it.
// - delay: redirect → event received by the bench's stream client, two ways: probe redirects
//   every 50 ms to a link of workspace 0 (sent → its event, client clock) and every event of the
//   run (the scan's timestamp, taken at the redirect on the same machine, → received); p50, p99, max.
// - delivered: events received / expected (each redirect's ~6), and any stream that ended.
// Results: bench/results/live-stream.json. Run: node bench/live-stream.bench.ts
// (BENCH_SECONDS, default 15; BENCH_ROUNDS, default 2; BENCH_RATE, default 2000).
import { readFileSync, rmSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { BENCH_ENV, deleteRunResources, freePort, medianBy, processCpuMs, start, writeResult } from './lib.ts';
import { wrk, fixedRate } from './wrk.ts';
import { machineBusyMs } from './cpu.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const RATE = Number(process.env.BENCH_RATE ?? 2000);
const WORKSPACES = 10;
const LINKS_PER_WORKSPACE = 10;
const DRAIN_MS = 2000;

const RUN = { TOPIC_PREFIX: `bench-live-${Date.now()}`, SCAN_JOURNAL_DIR: `${BENCH_ENV.SCAN_JOURNAL_DIR}-live-${Date.now()}` };
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const admin = { authorization: `Bearer ${BENCH_ENV.ADMIN_TOKEN}`, 'content-type': 'application/json' };

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}
const summary = (xs: number[]) => ({ n: xs.length, p50Ms: percentile(xs, 50), p99Ms: percentile(xs, 99), maxMs: xs.length ? xs.reduce((a, b) => Math.max(a, b), -Infinity) : NaN });

async function post(path: string, headers: Record<string, string>, body: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

interface Workspace { key: string; links: Array<{ id: string; shortId: string }> }

/** The bench's side of one stream: counts events, and records each one's delay from its scan's timestamp. */
interface Client { events: number; ended: boolean; close: () => void }
const delays: number[] = [];
let recording = false;
const probeSeen = new Map<string, number>();

function openStream(path: string, key: string, onScan?: (data: string) => void): Promise<Client> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } });
    req.on('error', (err) => (client.ended ? undefined : reject(err)));
    const client: Client = { events: 0, ended: false, close: () => req.destroy() };
    req.on('response', (res: IncomingMessage) => {
      if (res.statusCode !== 200) return reject(new Error(`${path}: ${res.statusCode}`));
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const at = event.indexOf('\nevent: scan\ndata: ');
          if (at < 0) continue;
          client.events++;
          const data = event.slice(at + 19);
          if (recording) {
            const ts = /"timestamp":"([^"]+)"/.exec(data)?.[1];
            if (ts) delays.push(Date.now() - Date.parse(ts));
          }
          onScan?.(data);
        }
      });
      res.on('close', () => (client.ended = true));
      resolve(client);
    });
    req.end();
  });
}

const ingress = await start('src/main.ts', {
  ...RUN,
  HTTP_PORT: String(port),
  REDIRECTS_PER_MINUTE_PER_IP: '1000000000',
  API_RATE_LIMIT_PER_MINUTE: '1000000',
  PUBLIC_BASE_URL: base,
}, 'ingress listening');
// Every thread of the ingress (its /proc stat counts them all).
const cpuOf = () => processCpuMs(ingress.child.pid!);
const rssMiB = () => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${ingress.child.pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024);

try {
  const workspaces: Workspace[] = [];
  for (let w = 0; w < WORKSPACES; w++) {
    const ws = await post('/admin/v1/workspaces', admin, { name: `live-bench-${w}`, plan: 'enterprise' });
    const { key } = await post(`/admin/v1/workspaces/${ws.id}/keys`, admin, { name: 'bench' });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const links = [];
    for (let l = 0; l < LINKS_PER_WORKSPACE; l++) links.push(await post('/api/v1/links', headers, { destination: `https://example.com/w${w}/l${l}` }));
    workspaces.push({ key, links });
  }
  const probeHeaders = { authorization: `Bearer ${workspaces[0]!.key}`, 'content-type': 'application/json' };
  const probeLink = await post('/api/v1/links', probeHeaders, { destination: 'https://example.com/probe' });
  const paths = workspaces.flatMap((w) => w.links.map((l) => `/${l.shortId}`));
  const script = `
wrk.headers["User-Agent"] = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1"
wrk.headers["X-Forwarded-For"] = "81.2.69.160"
local paths = { ${paths.map((p) => `"${p}"`).join(', ')} }
math.randomseed(42)
request = function()
  return wrk.format("GET", paths[math.random(#paths)])
end
${fixedRate(RATE)}`;
  await new Promise((r) => setTimeout(r, 2000));

  /** 1,000 streams: per workspace one of everything, 49 of one link, 50 that the load never matches (one of workspace 0's is the probe's). */
  async function openAll(): Promise<{ clients: Client[]; probe: Client }> {
    const clients: Client[] = [];
    const probe = await openStream(`/api/v1/links/${probeLink.id}/analytics/stream`, workspaces[0]!.key, (data) => {
      const cid = /"clickId":"([^"]+)"/.exec(data)?.[1];
      if (cid) probeSeen.set(cid, Date.now());
    });
    for (const [w, ws] of workspaces.entries()) {
      const paths = ['/api/v1/analytics/stream'];
      for (let i = 0; i < 49; i++) paths.push(`/api/v1/links/${ws.links[i % ws.links.length]!.id}/analytics/stream`);
      for (let i = 0; i < (w === 0 ? 49 : 50); i++) paths.push(i % 2 ? '/api/v1/analytics/stream?country=FR' : '/api/v1/analytics/stream?device=tablet');
      for (let i = 0; i < paths.length; i += 25) clients.push(...await Promise.all(paths.slice(i, i + 25).map((p) => openStream(p, ws.key))));
    }
    return { clients: [probe, ...clients], probe };
  }

  /** Probe redirects every 50 ms while `running`; each one's sent time by its click ID. */
  function probes(until: number): Promise<Map<string, number>> {
    const sent = new Map<string, number>();
    return (async () => {
      while (Date.now() < until) {
        const at = Date.now();
        const res = await fetch(`${base}/${probeLink.shortId}`, { redirect: 'manual', headers: { 'x-forwarded-for': '81.2.69.160' } });
        const cid = /svc_cid=([^&#]+)/.exec(res.headers.get('location') ?? '')?.[1];
        if (cid) sent.set(decodeURIComponent(cid), at);
        await new Promise((r) => setTimeout(r, 50));
      }
      return sent;
    })();
  }

  async function phase(withStreams: boolean) {
    const opened = withStreams ? await openAll() : undefined;
    if (opened) await new Promise((r) => setTimeout(r, 1000));
    delays.length = 0;
    probeSeen.clear();
    recording = true;
    const cpu0 = cpuOf();
    const busy0 = machineBusyMs();
    const probing = withStreams ? probes(Date.now() + SECONDS * 1000) : Promise.resolve(new Map<string, number>());
    const load = await wrk(`${base}/`, { connections: 50, seconds: SECONDS, maxRequests: RATE * SECONDS * 1.2, script });
    const sent = await probing;
    await new Promise((r) => setTimeout(r, DRAIN_MS));
    const cpuMs = cpuOf() - cpu0;
    const busyMs = machineBusyMs() - busy0 - load.wrkCpuMs;
    recording = false;
    const probeDelays = [...sent].flatMap(([cid, at]) => (probeSeen.has(cid) ? [probeSeen.get(cid)! - at] : []));
    const result = {
      withStreams,
      redirects: load.requests,
      redirectsPerSecond: load.requestsPerSecond,
      redirectP99Ms: load.latencyMs.p99,
      non3xx: load.non2xx3xx,
      ingressCpuMs: cpuMs,
      ingressCpuPerRedirectMs: Number((cpuMs / load.requests).toFixed(4)),
      machineBusyPerRedirectMs: Number((busyMs / load.requests).toFixed(4)),
      ...(opened
        ? {
          streams: opened.clients.length,
          eventsReceived: opened.clients.reduce((n, c) => n + c.events, 0),
          streamsEnded: opened.clients.filter((c) => c.ended).length,
          probeDelay: { ...summary(probeDelays), sent: sent.size, lost: sent.size - probeDelays.length },
          eventDelay: summary(delays),
        }
        : {}),
    };
    for (const c of opened?.clients ?? []) c.close();
    await new Promise((r) => setTimeout(r, 1000));
    console.log(JSON.stringify(result));
    return result;
  }

  const rssBeforeMiB = rssMiB();
  let redirectsInRing = 0;
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const none = await phase(false);
    const streams = await phase(true);
    redirectsInRing += none.redirects + streams.redirects;
    rounds.push({
      none,
      streams,
      addedIngressCpuPerRedirectMs: Number((streams.ingressCpuPerRedirectMs - none.ingressCpuPerRedirectMs).toFixed(4)),
      ingressCpuRatio: Number((streams.ingressCpuPerRedirectMs / none.ingressCpuPerRedirectMs).toFixed(3)),
    });
  }
  const median = medianBy(rounds, (r) => r.ingressCpuRatio);
  const p99s = rounds.map((r) => r.streams.eventDelay!.p99Ms);
  const result = {
    benchmark: 'live-stream',
    seconds: SECONDS,
    rate: RATE,
    streams: 1000,
    headline: {
      // The round of the median CPU ratio (the machine's speed drifts between rounds).
      addedIngressCpuPerRedirectMs: median.addedIngressCpuPerRedirectMs,
      ingressCpuRatio: median.ingressCpuRatio,
      // Every event of the run, each round's p99: the median round's and the worst.
      eventDelayP99Ms: medianBy(p99s, (x) => x),
      eventDelayP99WorstRoundMs: Math.max(...p99s),
      probeDelayP99Ms: medianBy(rounds.map((r) => r.streams.probeDelay!.p99Ms), (x) => x),
      // The redirects' own p99 (wrk), with and without the streams: the streams share the event loop.
      redirectP99Ms: { none: medianBy(rounds.map((r) => r.none.redirectP99Ms), (x) => x), streams: medianBy(rounds.map((r) => r.streams.redirectP99Ms), (x) => x) },
    },
    // Every scan of the run is still in the ingress's ring (the run is shorter than its 6 minutes): its memory, roughly.
    ring: { scans: redirectsInRing, rssBeforeMiB, rssAfterMiB: rssMiB(), bytesPerScanAbout: Math.round(((rssMiB() - rssBeforeMiB) * 1024 * 1024) / redirectsInRing) },
    targets: { delayP99BelowMs: 1000 },
    met: { delayP99MedianRound: medianBy(p99s, (x) => x) < 1000, delayP99EveryRound: Math.max(...p99s) < 1000 },
    rounds,
  };
  console.log(JSON.stringify(result.headline, null, 2));
  writeResult('live-stream', result);
} finally {
  await ingress.stop();
  await deleteRunResources(RUN.TOPIC_PREFIX);
  // The run's journal: shipped by the ingress's stop, its topics deleted.
  rmSync(RUN.SCAN_JOURNAL_DIR, { recursive: true, force: true });
}
