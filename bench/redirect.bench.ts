// Redirect throughput and latency, with scans journaled and published to Kafka,
// against a bare Fastify server answering 302 from a Map, in the same run:
//   1. each at full load (autocannon, 50 connections): requests/s and p50/p99,
//      in ROUNDS alternating rounds (this machine's speed drifts by 2× within
//      minutes, so one pair of runs can compare a fast minute with a slow one);
//      the ratio is the median of the rounds' ratios;
//   2. the ingress at half of its median maximum: p99 there.
// The per-IP redirect limit still runs, set high enough that one loopback
// client is not refused; so far below it, redirects are admitted without
// waiting on Redis and their counts reach Redis once per event-loop turn.
// Results: bench/results/redirect.json. Run: npx tsx bench/redirect.bench.ts
import { adminCreateKey, deleteRunResources, freePort, load, medianBy, start, writeResult } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MAX_REQUESTS = 2_000_000;

console.log('starting baseline and ingress…');
const basePort = freePort();
const baseline = await start('bench/baseline-redirect-server.ts', { HTTP_PORT: String(basePort) }, 'baseline listening');
const ingressPort = freePort();
// Its own topic prefix: the scans of this run are not left for later benchmarks' sinks.
const topicPrefix = `bench-redirect-${Date.now()}`;
const ingress = await start('src/main.ts', { TOPIC_PREFIX: topicPrefix, HTTP_PORT: String(ingressPort), REDIRECTS_PER_MINUTE_PER_IP: '1000000000', PUBLIC_BASE_URL: `http://127.0.0.1:${ingressPort}` }, 'ingress listening');
try {
  const base = `http://127.0.0.1:${ingressPort}`;
  const { key } = await adminCreateKey(base);
  const link = (await (await fetch(`${base}/api/v1/links`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ destination: 'https://example.com/landing?ref=bench' }),
  })).json()) as { shortId: string };
  // Let the cache pick the link up, and warm both servers.
  await new Promise((r) => setTimeout(r, 1000));
  const headers = { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1', 'x-forwarded-for': '81.2.69.160' };
  await load(`http://127.0.0.1:${basePort}/bench`, { connections: 10, seconds: 2 });
  await load(`${base}/${link.shortId}`, { connections: 10, seconds: 2, headers });

  console.log('measuring…');
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const bare = await load(`http://127.0.0.1:${basePort}/bench`, { connections: 50, seconds: SECONDS, maxRequests: MAX_REQUESTS });
    const ingressRun = await load(`${base}/${link.shortId}`, { connections: 50, seconds: SECONDS, maxRequests: MAX_REQUESTS, headers });
    rounds.push({ baseline: bare, ingress: ingressRun, ratio: Number((ingressRun.requestsPerSecond / bare.requestsPerSecond).toFixed(3)) });
  }
  const throughputRatio = medianBy(rounds, (r) => r.ratio).ratio;
  const ingressMax = medianBy(rounds, (r) => r.ingress.requestsPerSecond).ingress.requestsPerSecond;
  const halfRate = Math.floor(ingressMax / 2);
  const half = await load(`${base}/${link.shortId}`, { connections: 20, seconds: SECONDS, maxRequests: MAX_REQUESTS, rate: halfRate, headers });
  const result = {
    benchmark: 'redirect',
    seconds: SECONDS,
    rounds,
    baselineMedianRequestsPerSecond: medianBy(rounds, (r) => r.baseline.requestsPerSecond).baseline.requestsPerSecond,
    ingressMedianRequestsPerSecond: ingressMax,
    ingressAtHalfMax: { targetRate: halfRate, ...half },
    throughputRatio,
    targets: { throughputRatioAtLeast: 0.6, p99AtHalfMaxBelowMs: 10 },
    met: { throughput: throughputRatio >= 0.6, p99AtHalfMax: half.latencyMs.p99 < 10 },
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('redirect', result);
} finally {
  await ingress.stop();
  await baseline.stop();
  await deleteRunResources(topicPrefix);
}
