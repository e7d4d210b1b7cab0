// QR rendering in the worker pool, and its effect on redirects, each against a
// baseline measured in the same run:
//   1. QR PNG 512 px per second through POST /api/v1/qr (pool of one thread per
//      core), against the same rendering on the main thread of a bare Fastify
//      server (baseline-qr-server.ts) under the same load, in three alternating
//      rounds (median ratio): it should come close to the number of cores. The
//      rendering alone, in a loop on one thread with no HTTP, and the pool alone
//      (no HTTP, 8 tasks in flight) are reported too: they show how far the
//      render threads themselves scale here;
//   2. redirect p99 at a fixed rate, alone and with a concurrent QR load: the
//      pool keeps rendering off the event loop (target: under 20% worse). The
//      two are measured in turns, three times each, and each reported as the
//      median, since one 10 s run on this shared machine can be far off.
// Results: bench/results/qr.json. Run: npm run bench:qr (with the ingress's malloc settings).
import { availableParallelism } from 'node:os';
import render from '../src/links/qr/render-worker.ts';
import { RenderPool } from '../src/links/qr/render-pool.ts';
import type { QrTask } from '../src/links/qr/render-task.ts';
import { adminCreateKey, deleteRunResources, freePort, load, medianBy, start, writeResult } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const REDIRECT_RATE = Number(process.env.BENCH_REDIRECT_RATE ?? 1000);
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const topicPrefix = `bench-qr-${Date.now()}`;
const ingress = await start('src/main.ts', {
  TOPIC_PREFIX: topicPrefix, HTTP_PORT: String(port), PUBLIC_BASE_URL: base,
  REDIRECTS_PER_MINUTE_PER_IP: '1000000000', API_RATE_LIMIT_PER_MINUTE: '1000000', RENDER_QUEUE: '1000',
}, 'ingress listening');

try {
  const { key } = await adminCreateKey(base);
  const link = (await (await fetch(`${base}/api/v1/links`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ destination: 'https://example.com/qr-bench' }) })).json()) as { shortId: string; shortUrl: string };
  await new Promise((r) => setTimeout(r, 1000));

  // 1. The rendering alone: one thread, no HTTP.
  const task: QrTask = { kind: 'qr', text: link.shortUrl, format: 'png', size: 512, margin: 4, errorCorrection: 'M', fgColor: '#000000', bgColor: '#ffffff' };
  let rendered = 0;
  const end = Date.now() + SECONDS * 1000;
  while (Date.now() < end && rendered < 1_000_000) {
    await render(task);
    rendered++;
  }
  const mainThreadPerSecond = rendered / SECONDS;

  // The pool alone, no HTTP: how the render threads themselves scale on this machine.
  const pool = new RenderPool();
  let pooledAlone = 0;
  const poolEnd = Date.now() + SECONDS * 1000;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (Date.now() < poolEnd) {
      await pool.render(task);
      pooledAlone++;
    }
  }));
  await pool.close();
  const poolAlonePerSecond = pooledAlone / SECONDS;
  const qrRequest = { method: 'POST' as const, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ shortId: link.shortId, format: 'png', size: 512 }) };

  // The same rendering on one thread behind a bare endpoint, and through the pool, in alternating
  // rounds (this machine's speed drifts within minutes); the ratio is the median of the rounds'.
  const basePort = freePort();
  const baseline = await start('bench/baseline-qr-server.ts', { HTTP_PORT: String(basePort) }, 'baseline listening');
  const poolRounds = [];
  try {
    const baseRequest = { method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify(task) };
    await load(`http://127.0.0.1:${basePort}/qr`, { connections: 8, seconds: 2, ...baseRequest });
    await load(`${base}/api/v1/qr`, { connections: 8, seconds: 2, ...qrRequest });
    for (let round = 0; round < 3; round++) {
      const oneThread = await load(`http://127.0.0.1:${basePort}/qr`, { connections: 8, seconds: SECONDS, maxRequests: 5_000_000, ...baseRequest });
      const pooled = await load(`${base}/api/v1/qr`, { connections: 8, seconds: SECONDS, maxRequests: 5_000_000, ...qrRequest });
      poolRounds.push({ oneThread, pooled, ratio: Number((pooled.requestsPerSecond / oneThread.requestsPerSecond).toFixed(2)) });
    }
  } finally {
    await baseline.stop();
  }
  const poolRatio = medianBy(poolRounds, (r) => r.ratio).ratio;

  // 2. Redirect latency at a fixed rate, alone and beside a QR load, in turns.
  const redirectUrl = `${base}/${link.shortId}`;
  const redirects = () => load(redirectUrl, { connections: 10, seconds: SECONDS, rate: REDIRECT_RATE, maxRequests: REDIRECT_RATE * SECONDS });
  const aloneRuns = [];
  const withQrRuns = [];
  for (let round = 0; round < 3; round++) {
    aloneRuns.push(await redirects());
    const [withQr, qrBeside] = await Promise.all([redirects(), load(`${base}/api/v1/qr`, { connections: 8, seconds: SECONDS, maxRequests: 5_000_000, ...qrRequest })]);
    withQrRuns.push({ ...withQr, qrRequestsPerSecond: qrBeside.requestsPerSecond });
  }
  const p99 = (runs: { latencyMs: { p99: number } }[]) => medianBy(runs, (r) => r.latencyMs.p99).latencyMs.p99;
  const aloneP99 = p99(aloneRuns);
  const withQrP99 = p99(withQrRuns);

  const result = {
    benchmark: 'qr',
    cores: availableParallelism(),
    seconds: SECONDS,
    qrPng512: {
      renderingAloneOneThreadPerSecond: Math.round(mainThreadPerSecond),
      poolAloneNoHttpPerSecond: Math.round(poolAlonePerSecond),
      poolAloneRatio: Number((poolAlonePerSecond / mainThreadPerSecond).toFixed(2)),
      rounds: poolRounds,
      ratio: poolRatio,
    },
    redirectP99: {
      rate: REDIRECT_RATE,
      alone: aloneRuns.map((r) => r.latencyMs),
      withQrLoad: withQrRuns.map((r) => ({ ...r.latencyMs, qrRequestsPerSecond: r.qrRequestsPerSecond })),
      aloneP99Ms: aloneP99,
      withQrLoadP99Ms: withQrP99,
      p99Ratio: Number((withQrP99 / Math.max(1, aloneP99)).toFixed(2)),
    },
    targets: { qrRatioCloseToCores: availableParallelism(), redirectP99AtMost: 1.2 },
    met: { qrRatioAtLeast90PercentOfCores: poolRatio >= 0.9 * availableParallelism(), redirectP99: withQrP99 <= Math.max(1, aloneP99) * 1.2 },
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('qr', result);
} finally {
  await ingress.stop();
  await deleteRunResources(topicPrefix);
}
