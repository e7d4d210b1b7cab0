// Memory and start time of the two processes (issue 40, item 4), as run.sh runs
// them (production settings, BENCH_ENV): on fresh databases (Postgres and
// ClickHouse made for the run, a topic prefix of its own), the workers and the
// ingress are started at once and each is timed to its first 200 from /readyz;
// then each one's RSS idle (once it has settled), its peak during SECONDS of
// RATE redirects a second (wrk) while the workers record the scans (until every
// answered redirect is in ClickHouse), and RSS after. RSS is /proc/<pid>/status
// (VmRSS, sampled every 200 ms; VmHWM, the kernel's own peak, beside it). Each
// process's heaps by thread come from its /metrics (nodejs_heap_space_*, the
// main thread's V8 spaces, young generation included; linkmail_thread_heap_*,
// its other threads). Then the first QR render's latency (render threads start
// on demand) and the pieces measured alone (bench/memory-component.ts).
// Results: bench/results/memory.json. Run: node bench/memory.bench.ts
// (BENCH_MEMORY_ENV='{"NODE_OPTIONS":"…","MALLOC_ARENA_MAX":"…"}' starts both processes with other
// settings, to compare; BENCH_RESULT names the result file.)
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { execFile } from 'node:child_process';
import { loadServiceConfig } from '../src/service.ts';
import { dropDatabases } from '../test/support/drop-databases.ts';
import { adminCreateKey, BENCH_ENV, deleteRunResources, freePort, INGRESS_SETTINGS, processCpuMs, ROOT, storedScansOf, writeResult, type Proc } from './lib.ts';
import { fixedRate, wrk } from './wrk.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const RATE = Number(process.env.BENCH_RATE ?? 2000);
const TARGETS = { readyWithinS: 10, idleRssAtMostMiB: 200, peakRssAtMostMiB: 300 };
const MiB = 1024 * 1024;
const run = promisify(execFile);

const stamp = Date.now();
const NAME = `linkmail_bench_memory_${stamp}`;
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const RUN_ENV: Record<string, string> = {
  DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${NAME}`,
  CLICKHOUSE_DATABASE: NAME,
  TOPIC_PREFIX: `bench-memory-${stamp}`,
  SCAN_JOURNAL_DIR: `${BENCH_ENV.SCAN_JOURNAL_DIR}-memory-${stamp}`,
  REDIRECTS_PER_MINUTE_PER_IP: '1000000000',
  PUBLIC_BASE_URL: base,
  HTTP_PORT: String(port),
};
const SETTINGS: Record<string, string> = { ...BENCH_ENV, ...(JSON.parse(process.env.BENCH_MEMORY_ENV ?? '{}') as Record<string, string>) };
const config = loadServiceConfig({ ...process.env, ...BENCH_ENV, ...RUN_ENV });

interface Started extends Proc {
  startedAt: number;
}

/** Starts an entry point as run.sh does (node itself, the production settings; the malloc ones of the ingress only), without waiting. */
function launch(entry: string, ingress: boolean): Started {
  const env: Record<string, string | undefined> = { ...process.env, ...SETTINGS, ...RUN_ENV };
  if (!ingress) for (const name of Object.keys(INGRESS_SETTINGS)) delete env[name];
  const child = spawn(process.execPath, [entry], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return {
    child,
    startedAt: Date.now(),
    output: () => out,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** Milliseconds from the process's start to the first 200 of `url()` (undefined until known), polled every 100 ms. */
async function readyAfter(proc: Started, url: () => string | undefined, timeoutMs = 120_000): Promise<number> {
  for (;;) {
    const at = url();
    if (at && (await fetch(at).then((r) => r.status === 200, () => false))) return Date.now() - proc.startedAt;
    if (proc.child.exitCode !== null) throw new Error(`exited:\n${proc.output()}`);
    if (Date.now() - proc.startedAt > timeoutMs) throw new Error(`not ready after ${timeoutMs} ms:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What the process logged on its way up, as [ms after its start, message] (pino's JSON lines). */
function timeline(proc: Started, untilMs: number): [number, string][] {
  const lines: [number, string][] = [];
  for (const line of proc.output().split('\n')) {
    try {
      const entry = JSON.parse(line) as { time?: number; msg?: string };
      if (entry.time && entry.msg && entry.time - proc.startedAt <= untilMs) lines.push([entry.time - proc.startedAt, entry.msg]);
    } catch {
      // not a log line
    }
  }
  return lines;
}

/** The operations port's URL, from the process's log line "metrics listening". */
const metricsUrl = (proc: Proc): string | undefined => /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"metrics listening"/.exec(proc.output())?.[1];

function status(pid: number): { rss: number; hwm: number; anon: number; file: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) / 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM'), anon: kb('RssAnon'), file: kb('RssFile') };
}

/** RSS once it has settled: sampled every 500 ms until it moved less than 1 MiB over 5 s (at most 60 s). */
async function settledRss(pid: number): Promise<{ rss: number; anon: number; file: number; afterMs: number }> {
  const samples: number[] = [];
  const started = Date.now();
  for (;;) {
    samples.push(status(pid).rss);
    const last = samples.slice(-11);
    if ((last.length === 11 && Math.max(...last) - Math.min(...last) < 1) || Date.now() - started > 60_000) {
      const s = status(pid);
      return { rss: round(s.rss), anon: round(s.anon), file: round(s.file), afterMs: Date.now() - started };
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Peak RSS of each pid while `during` runs, sampled every 200 ms. */
async function peakDuring<T, K extends string>(pids: Record<K, number>, during: () => Promise<T>): Promise<{ result: T; peak: Record<K, number> }> {
  const peak = Object.fromEntries(Object.keys(pids).map((k) => [k, 0])) as Record<K, number>;
  const sample = () => {
    for (const name of Object.keys(pids) as K[]) peak[name] = Math.max(peak[name], status(pids[name]).rss);
  };
  const timer = setInterval(sample, 200);
  try {
    const result = await during();
    sample();
    for (const name of Object.keys(pids) as K[]) peak[name] = round(peak[name]);
    return { result, peak };
  } finally {
    clearInterval(timer);
  }
}

const round = (n: number) => Number(n.toFixed(1));

/** The process's heaps from its /metrics: the main thread's V8 spaces (size and used, MiB) and its other threads'. */
async function heaps(url: string | undefined): Promise<Record<string, unknown>> {
  if (!url) return {};
  const text = await (await fetch(`${url}/metrics`)).text();
  const values = (name: string, label: string) => Object.fromEntries([...text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} ([\\d.e+]+)$`, 'gm'))]
    .map((m) => [new RegExp(`${label}="([^"]+)"`).exec(m[1]!)?.[1] ?? m[1]!, round(Number(m[2]) / MiB)]));
  return {
    mainThreadSpaceSizeMiB: values('nodejs_heap_space_size_total_bytes', 'space'),
    mainThreadSpaceUsedMiB: values('nodejs_heap_space_size_used_bytes', 'space'),
    externalMiB: round(Number(/^nodejs_external_memory_bytes ([\d.e+]+)$/m.exec(text)?.[1] ?? NaN) / MiB),
    otherThreadsHeapSizeMiB: values('linkmail_thread_heap_size_bytes', 'thread'),
    otherThreadsExternalMiB: values('linkmail_thread_external_memory_bytes', 'thread'),
  };
}

/** A piece measured alone (memory-component.ts) in a fresh process. */
async function component(name: string): Promise<Record<string, unknown>> {
  try {
    const { stdout } = await run(process.execPath, ['--expose-gc', 'bench/memory-component.ts', name], { cwd: ROOT, env: { ...process.env, ...BENCH_ENV, ...RUN_ENV, NODE_OPTIONS: '' }, timeout: 120_000 });
    return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
  } catch (err) {
    return { error: (err as Error).message.split('\n')[0] };
  }
}

/** RSS of a bare node process after a GC, its code JavaScript or TypeScript (the difference: Node's type stripping, loaded once per thread). */
async function bareNode(inputType: 'module' | 'module-typescript'): Promise<number> {
  const declaration = inputType === 'module' ? 'const one = 1;' : 'const one: number = 1;';
  const code = `${declaration} globalThis.gc(); await new Promise((r) => setTimeout(r, 500)); console.log(process.memoryUsage().rss + one - 1);`;
  const { stdout } = await run(process.execPath, ['--expose-gc', `--input-type=${inputType}`, '-e', code], { env: { ...process.env, NODE_OPTIONS: '' } });
  return round(Number(stdout.trim()) / MiB);
}

const running: Started[] = [];
try {
  console.log(`starting the workers and the ingress at once on fresh databases (${NAME})…`);
  const loadAverage = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
  const workers = launch('workers/all.ts', false);
  const ingress = launch('src/main.ts', true);
  running.push(workers, ingress);
  // With the CPU each had used by then (all its threads): what its start-up costs on a machine of its own.
  const cpuAtReady = (proc: Started) => (ms: number) => ({ ms, cpuMs: processCpuMs(proc.child.pid!) });
  const [workersReady, ingressReady] = await Promise.all([
    readyAfter(workers, () => { const u = metricsUrl(workers); return u && `${u}/readyz`; }).then(cpuAtReady(workers)),
    readyAfter(ingress, () => `${base}/readyz`).then(cpuAtReady(ingress)),
  ]);
  const [workersReadyMs, ingressReadyMs] = [workersReady.ms, ingressReady.ms];
  console.log(`ready: workers ${workersReadyMs} ms, ingress ${ingressReadyMs} ms`);
  const pids = { ingress: ingress.child.pid!, workers: workers.child.pid! };
  const idle = { ingress: await settledRss(pids.ingress), workers: await settledRss(pids.workers) };
  const idleHeaps = { ingress: await heaps(metricsUrl(ingress)), workers: await heaps(metricsUrl(workers)) };
  console.log(`idle: ingress ${idle.ingress.rss} MiB, workers ${idle.workers.rss} MiB`);

  const { key } = await adminCreateKey(base);
  const link = (await (await fetch(`${base}/api/v1/links`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ destination: 'https://example.com/landing?ref=bench' }) })).json()) as { shortId: string };
  await new Promise((r) => setTimeout(r, 1000));
  const stored = async () => {
    return (await storedScansOf(config, NAME, link.shortId)).distinct;
  };
  // Every redirect from an address of its own, spread over the space, half IPv4 and half IPv6: the worst
  // case for what the ingress keeps per address (the IP database's pages, the caches by address).
  const script = `
local n = 0
local agent = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1"
request = function()
  n = n + 1
  local x = (n * 2654435761) % 4294967296
  local ip
  if n % 2 == 0 then
    ip = string.format("%d.%d.%d.%d", math.max(1, math.floor(x / 16777216)), math.floor(x / 65536) % 256, math.floor(x / 256) % 256, x % 256)
  else
    ip = string.format("2a0%d:%x:%x::%x", x % 10, math.floor(x / 65536) % 65536, x % 65536, n % 65536)
  end
  return wrk.format("GET", "/${link.shortId}", { ["User-Agent"] = agent, ["X-Forwarded-For"] = ip })
end
${fixedRate(RATE)}`;
  let heapsAtPeak: Record<string, unknown> = {};
  const cpuBefore = { ingress: processCpuMs(pids.ingress), workers: processCpuMs(pids.workers) };
  const { result: loaded, peak } = await peakDuring(pids, async () => {
    const loadRun = wrk(base, { connections: 50, seconds: SECONDS, maxRequests: RATE * SECONDS, script });
    // The heaps near the end of the load, when the young generation is at its fullest.
    await new Promise((r) => setTimeout(r, (SECONDS - 3) * 1000));
    heapsAtPeak = { ingress: await heaps(metricsUrl(ingress)), workers: await heaps(metricsUrl(workers)) };
    const load = await loadRun;
    const answered = load.requests - load.non2xx3xx;
    const drainStart = Date.now();
    let recorded = await stored();
    while (recorded < answered && Date.now() - drainStart < 180_000) {
      await new Promise((r) => setTimeout(r, 500));
      recorded = await stored();
    }
    return { load, answered, recorded, drainMs: Date.now() - drainStart };
  });
  // Each process's CPU (all its threads) per answered redirect, from the load's start until the scans were stored.
  const cpuPerScanUs = { ingress: round(((processCpuMs(pids.ingress) - cpuBefore.ingress) * 1000) / loaded.answered), workers: round(((processCpuMs(pids.workers) - cpuBefore.workers) * 1000) / loaded.answered) };
  console.log(`load: ${loaded.load.requestsPerSecond} req/s, ${loaded.recorded}/${loaded.answered} scans recorded; peak ingress ${peak.ingress} MiB, workers ${peak.workers} MiB`);
  const after = { ingress: await settledRss(pids.ingress), workers: await settledRss(pids.workers) };
  const hwm = { ingress: round(status(pids.ingress).hwm), workers: round(status(pids.workers).hwm) };

  // Render threads start on the first render (minThreads 0): its latency against the next one's.
  const qr = async () => {
    const started = performance.now();
    const res = await fetch(`${base}/api/v1/qr`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ shortId: link.shortId, format: 'png', size: 512 }) });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`QR: ${res.status}`);
    return Math.round(performance.now() - started);
  };
  const qrMs = { first: await qr(), second: await qr(), third: await qr() };
  const withRenderThread = await settledRss(pids.ingress);
  console.log(`QR: first ${qrMs.first} ms, then ${qrMs.second} and ${qrMs.third} ms; ingress with a render thread ${withRenderThread.rss} MiB`);

  console.log('measuring the pieces alone…');
  const components = {
    geoip: await component('geoip'),
    userAgent: await component('user-agent'),
    renderThread: await component('render-thread'),
    threadTypeScript: await component('thread-ts'),
    threadJavaScript: await component('thread-js'),
    cachesAtTheirBounds: await component('caches'),
    loaderMainThread: { rssMiB: round((await bareNode('module-typescript')) - (await bareNode('module'))) },
  };

  const result = {
    benchmark: 'memory',
    loadAverageAtStart: loadAverage,
    settings: { both: Object.fromEntries(Object.entries(SETTINGS).filter(([k]) => (k === 'NODE_OPTIONS' || k.startsWith('MALLOC_')) && !(k in INGRESS_SETTINGS))), ingressAlso: INGRESS_SETTINGS },
    readyMs: { ingress: ingressReadyMs, workers: workersReadyMs },
    cpuMsUntilReady: { ingress: ingressReady.cpuMs, workers: workersReady.cpuMs },
    startUpLog: { ingress: timeline(ingress, ingressReadyMs), workers: timeline(workers, workersReadyMs) },
    idleRssMiB: idle,
    idleHeaps,
    load: { seconds: SECONDS, targetRate: RATE, requestsPerSecond: loaded.load.requestsPerSecond, p99Ms: loaded.load.latencyMs.p99, answered: loaded.answered, recordedInClickHouse: loaded.recorded, drainMs: loaded.drainMs },
    cpuPerScanUs,
    peakRssMiB: peak,
    heapsNearPeak: heapsAtPeak,
    vmHwmMiB: hwm,
    afterRssMiB: after,
    qrRenderMs: qrMs,
    ingressRssWithOneRenderThreadMiB: withRenderThread.rss,
    components,
    targets: TARGETS,
    met: {
      ready: ingressReadyMs <= TARGETS.readyWithinS * 1000 && workersReadyMs <= TARGETS.readyWithinS * 1000,
      idle: idle.ingress.rss <= TARGETS.idleRssAtMostMiB && idle.workers.rss <= TARGETS.idleRssAtMostMiB,
      peak: peak.ingress <= TARGETS.peakRssAtMostMiB && peak.workers <= TARGETS.peakRssAtMostMiB,
      everyScanRecorded: loaded.recorded >= loaded.answered,
    },
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult(process.env.BENCH_RESULT ?? 'memory', result);
} finally {
  for (const proc of running.reverse()) await proc.stop();
  await dropDatabases(config, NAME).catch((err) => console.error('could not drop the databases:', err));
  await deleteRunResources(RUN_ENV.TOPIC_PREFIX!);
  // Every scan of the run is in Kafka by now (or the run failed): its journal is of no further use.
  rmSync(RUN_ENV.SCAN_JOURNAL_DIR!, { recursive: true, force: true });
}
