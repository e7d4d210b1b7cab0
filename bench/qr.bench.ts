// QR rendering in the worker pool, and its effect on redirects, each against a
// baseline measured in the same run:
//   1. QR PNG 512 px per second through POST /api/v1/qr (pool of one thread per
//      core), against the same rendering called in a loop on one thread: the
//      ratio should come close to the number of cores;
//   2. redirect p99 at a fixed rate, alone and with a concurrent QR load: the
//      pool keeps rendering off the event loop (target: under 20% worse).
// Results: bench/results/qr.json. Run: npx tsx bench/qr.bench.ts
import { availableParallelism } from 'node:os';
import render from '../src/links/qr/render-worker.ts';
import type { QrTask } from '../src/links/qr/render-task.ts';
import { adminCreateKey, freePort, load, start, writeResult } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const REDIRECT_RATE = Number(process.env.BENCH_REDIRECT_RATE ?? 1000);
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const ingress = await start('src/main.ts', {
  TOPIC_PREFIX: `bench-qr-${Date.now()}`, HTTP_PORT: String(port), PUBLIC_BASE_URL: base,
  REDIRECTS_PER_MINUTE_PER_IP: '1000000000', API_RATE_LIMIT_PER_MINUTE: '1000000', RENDER_QUEUE: '1000',
}, 'ingress listening');

try {
  const { key } = await adminCreateKey(base);
  const link = (await (await fetch(`${base}/api/v1/links`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ destination: 'https://example.com/qr-bench' }) })).json()) as { shortId: string; shortUrl: string };
  await new Promise((r) => setTimeout(r, 1000));

  // 1. One thread, no HTTP: the rendering alone.
  const task: QrTask = { kind: 'qr', text: link.shortUrl, format: 'png', size: 512, margin: 4, errorCorrection: 'M', fgColor: '#000000', bgColor: '#ffffff' };
  let rendered = 0;
  const end = Date.now() + SECONDS * 1000;
  while (Date.now() < end && rendered < 1_000_000) {
    await render(task);
    rendered++;
  }
  const mainThreadPerSecond = rendered / SECONDS;
  const qrRequest = { method: 'POST' as const, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ shortId: link.shortId, format: 'png', size: 512 }) };
  await load(`${base}/api/v1/qr`, { connections: 8, seconds: 2, ...qrRequest });
  const pooled = await load(`${base}/api/v1/qr`, { connections: 8, seconds: SECONDS, maxRequests: 5_000_000, ...qrRequest });

  // 2. Redirect latency at a fixed rate, alone and beside a QR load.
  const redirectUrl = `${base}/${link.shortId}`;
  const alone = await load(redirectUrl, { connections: 10, seconds: SECONDS, rate: REDIRECT_RATE, maxRequests: REDIRECT_RATE * SECONDS });
  const [withQr, qrBeside] = await Promise.all([
    load(redirectUrl, { connections: 10, seconds: SECONDS, rate: REDIRECT_RATE, maxRequests: REDIRECT_RATE * SECONDS }),
    load(`${base}/api/v1/qr`, { connections: 8, seconds: SECONDS, maxRequests: 5_000_000, ...qrRequest }),
  ]);

  const result = {
    benchmark: 'qr',
    cores: availableParallelism(),
    seconds: SECONDS,
    qrPng512: {
      mainThreadRendersPerSecond: Math.round(mainThreadPerSecond),
      endpointWithPool: pooled,
      ratio: Number((pooled.requestsPerSecond / mainThreadPerSecond).toFixed(2)),
    },
    redirectP99: {
      rate: REDIRECT_RATE,
      alone: alone.latencyMs,
      withQrLoad: withQr.latencyMs,
      qrLoadRequestsPerSecond: qrBeside.requestsPerSecond,
      p99Ratio: Number((withQr.latencyMs.p99 / Math.max(1, alone.latencyMs.p99)).toFixed(2)),
    },
    targets: { qrRatioCloseToCores: availableParallelism(), redirectP99AtMost: 1.2 },
    met: { redirectP99: withQr.latencyMs.p99 <= Math.max(1, alone.latencyMs.p99) * 1.2 },
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('qr', result);
} finally {
  await ingress.stop();
}
