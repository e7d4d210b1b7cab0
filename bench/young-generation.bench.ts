// What a memory setting costs in CPU (issue 40: a setting that saves memory but
// costs CPU is a trade to show): two pairs of processes, each an ingress and a
// worker process with the consumers of `scans`, one pair with settings A (the
// young generation as before, --max-semi-space-size=32), the other with settings
// B (BENCH_ENV: as run.sh runs them now), side by side on the same stack, each pair on a
// topic prefix of its own. In ROUNDS alternating rounds each pair takes SECONDS of
// RATE redirects a second (wrk at a fixed rate); a round lasts until its scans are
// in ClickHouse. Each process's CPU (all its threads, /proc) over the round per
// answered redirect, and the rounds' ratios B / A. What a process spends idle
// (timers, heartbeats, polling) is in it for both pairs alike, and reported apart
// (subtracting it, measured once, made the workers' few µs a scan mostly noise). On this shared machine other work slows both pairs
// alike within a round, which is why the rounds alternate and the ratio is the
// headline; the machine's busy time is not used (other sessions' load is in it).
// Results: bench/results/young-generation.json. Run: node bench/young-generation.bench.ts
// (BENCH_A / BENCH_B: JSON of the settings to compare, e.g. '{"NODE_OPTIONS":"--max-semi-space-size=16"}'.)
import { rmSync } from 'node:fs';
import { adminCreateKey, BENCH_ENV, deleteRunResources, freePort, medianBy, processCpuMs, start, storedScansOf, writeResult, type Proc } from './lib.ts';
import { fixedRate, wrk } from './wrk.ts';
import { loadServiceConfig } from '../src/service.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const RATE = Number(process.env.BENCH_RATE ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const IDLE_SECONDS = 10;
const SETTINGS = {
  // Before issue 40: a 32 MB semi-space and glibc's own arena count (8 per core: 16 here).
  A: JSON.parse(process.env.BENCH_A ?? '{"NODE_OPTIONS":"--max-semi-space-size=32","MALLOC_ARENA_MAX":"16"}') as Record<string, string>,
  B: JSON.parse(process.env.BENCH_B ?? '{}') as Record<string, string>,
};
const config = loadServiceConfig({ ...process.env, ...BENCH_ENV });
const stamp = Date.now();

interface Pair {
  name: 'A' | 'B';
  base: string;
  prefix: string;
  ingress: Proc;
  workers: Proc;
  shortId: string;
  idleCpuMsPerS: { ingress: number; workers: number };
}

const cpu = (pair: Pair) => ({ ingress: processCpuMs(pair.ingress.child.pid!), workers: processCpuMs(pair.workers.child.pid!) });
const round1 = (n: number) => Number(n.toFixed(1));

async function stored(shortId: string): Promise<number> {
  return (await storedScansOf(config, BENCH_ENV.CLICKHOUSE_DATABASE!, shortId)).distinct;
}

const running: Proc[] = [];
const pairs: Pair[] = [];
try {
  for (const name of ['A', 'B'] as const) {
    const port = freePort();
    const prefix = `bench-young-${name}-${stamp}`;
    // The settings replace BENCH_ENV's (NODE_OPTIONS included), so each pair runs with exactly its own.
    const env = { ...SETTINGS[name], TOPIC_PREFIX: prefix, SCAN_JOURNAL_DIR: `${BENCH_ENV.SCAN_JOURNAL_DIR}-young-${name}-${stamp}` };
    console.log(`starting pair ${name} (${JSON.stringify(SETTINGS[name])})…`);
    const ingress = await start('src/main.ts', { ...env, HTTP_PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, REDIRECTS_PER_MINUTE_PER_IP: '1000000000' }, 'ingress listening');
    running.push(ingress);
    const workers = await start('workers/run.ts', env, 'worker process ready', 120_000, ['links-scan-sink', 'links-conversion-sink', 'links-webhooks']);
    running.push(workers);
    const base = `http://127.0.0.1:${port}`;
    const { key } = await adminCreateKey(base);
    const link = (await (await fetch(`${base}/api/v1/links`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ destination: 'https://example.com/landing?ref=bench' }) })).json()) as { shortId: string };
    pairs.push({ name, base, prefix, ingress, workers, shortId: link.shortId, idleCpuMsPerS: { ingress: 0, workers: 0 } });
  }
  // A short warm-up of each pair (code optimised, consumers joined, first batches stored), then each one's idle CPU.
  const script = (shortId: string, rate: number) => `
request = function()
  return wrk.format("GET", "/${shortId}", { ["User-Agent"] = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1", ["X-Forwarded-For"] = "81.2.69.160" })
end
${fixedRate(rate)}`;
  const expected = new Map<string, number>();
  const drained = async (pair: Pair, answered: number) => {
    expected.set(pair.shortId, (expected.get(pair.shortId) ?? 0) + answered);
    const end = Date.now() + 180_000;
    while ((await stored(pair.shortId)) < expected.get(pair.shortId)!) {
      if (Date.now() > end) throw new Error(`pair ${pair.name}: scans not stored within 180 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  for (const pair of pairs) {
    const warm = await wrk(pair.base, { connections: 20, seconds: 5, maxRequests: RATE * 5, script: script(pair.shortId, RATE) });
    await drained(pair, warm.requests - warm.non2xx3xx);
  }
  await new Promise((r) => setTimeout(r, 5000));
  const idleFrom = pairs.map(cpu);
  await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
  pairs.forEach((pair, i) => {
    const now = cpu(pair);
    pair.idleCpuMsPerS = { ingress: (now.ingress - idleFrom[i]!.ingress) / IDLE_SECONDS, workers: (now.workers - idleFrom[i]!.workers) / IDLE_SECONDS };
  });
  console.log(`idle CPU (ms/s): ${pairs.map((p) => `${p.name} ingress ${p.idleCpuMsPerS.ingress}, workers ${p.idleCpuMsPerS.workers}`).join('; ')}`);

  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const perPair: Record<string, { ingressUs: number; workersUs: number; totalUs: number; requestsPerSecond: number; p99Ms: number }> = {};
    // Alternating which pair goes first.
    for (const pair of r % 2 === 0 ? pairs : [...pairs].reverse()) {
      const before = cpu(pair);
      const load = await wrk(pair.base, { connections: 50, seconds: SECONDS, maxRequests: RATE * SECONDS, script: script(pair.shortId, RATE) });
      const answered = load.requests - load.non2xx3xx;
      await drained(pair, answered);
      const after = cpu(pair);
      const us = (part: 'ingress' | 'workers') => ((after[part] - before[part]) * 1000) / answered;
      perPair[pair.name] = { ingressUs: round1(us('ingress')), workersUs: round1(us('workers')), totalUs: round1(us('ingress') + us('workers')), requestsPerSecond: load.requestsPerSecond, p99Ms: load.latencyMs.p99 };
    }
    const ratio = Number((perPair.B!.totalUs / perPair.A!.totalUs).toFixed(3));
    rounds.push({
      ...perPair,
      ratioBOverA: ratio,
      ingressRatio: Number((perPair.B!.ingressUs / perPair.A!.ingressUs).toFixed(3)),
      workersRatio: Number((perPair.B!.workersUs / perPair.A!.workersUs).toFixed(3)),
    });
    console.log(`round ${r + 1}: A ${perPair.A!.totalUs} µs (ingress ${perPair.A!.ingressUs}, workers ${perPair.A!.workersUs}), B ${perPair.B!.totalUs} µs (ingress ${perPair.B!.ingressUs}, workers ${perPair.B!.workersUs}): B/A ${ratio}`);
  }
  const result = {
    benchmark: 'young-generation',
    settings: SETTINGS,
    seconds: SECONDS,
    rate: RATE,
    idleCpuMsPerS: Object.fromEntries(pairs.map((p) => [p.name, p.idleCpuMsPerS])),
    rounds,
    medianRatioBOverA: medianBy(rounds, (r) => r.ratioBOverA).ratioBOverA,
    medianIngressRatio: medianBy(rounds, (r) => r.ingressRatio).ingressRatio,
    medianWorkersRatio: medianBy(rounds, (r) => r.workersRatio).workersRatio,
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('young-generation', result);
} finally {
  for (const proc of running.reverse()) await proc.stop();
  for (const pair of pairs) await deleteRunResources(pair.prefix);
  for (const name of ['A', 'B']) rmSync(`${BENCH_ENV.SCAN_JOURNAL_DIR}-young-${name}-${stamp}`, { recursive: true, force: true });
}
