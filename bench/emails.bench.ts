// POST /emails throughput and p99, each request with a fresh idempotency key
// (stored, published to mail.messages through the outbox), against a bare
// Fastify route doing one Postgres INSERT, in the same run: ROUNDS alternating
// rounds under wrk (-t1 -c50), ratio = median of the rounds' ratios.
// The requests are spread over KEYS mail keys with the highest per-key cap
// (1000/s each), so the per-key limit does not decide the figure.
// Results: bench/results/emails.json. Run: node bench/emails.bench.ts
import { BENCH_ENV, deleteRunResources, freePort, medianBy, start, writeResult } from './lib.ts';
import { wrk } from './wrk.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const KEYS = 20;
const MAX_REQUESTS = 500_000;

const admin = { authorization: `Bearer ${BENCH_ENV.ADMIN_TOKEN}`, 'content-type': 'application/json' };
async function post(url: string, body: unknown, headers: Record<string, string> = admin): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Lua for wrk: each request a fresh Idempotency-Key (thread id, counter, random), keys taken in turn. */
function script(keys: string[], body: string): string {
  return `
local keys = { ${keys.map((k) => `"${k}"`).join(', ')} }
local body = [[${body}]]
local n = 0
local salt = tostring(math.random(1, 1e9))
request = function()
  n = n + 1
  local headers = {}
  headers["Content-Type"] = "application/json"
  headers["Authorization"] = "Bearer " .. keys[(n % #keys) + 1]
  headers["Idempotency-Key"] = "bench-" .. salt .. "-" .. n
  return wrk.format("POST", "/emails", headers, body)
end
`;
}

console.log('starting baseline and ingress…');
const ingressPort = freePort();
const topicPrefix = `bench-emails-${Date.now()}`;
// The ingress first: it creates and migrates the bench database the baseline writes to.
const ingress = await start('src/main.ts', { TOPIC_PREFIX: topicPrefix, HTTP_PORT: String(ingressPort), PUBLIC_BASE_URL: `http://127.0.0.1:${ingressPort}` }, 'ingress listening');
const basePort = freePort();
const baseline = await start('bench/baseline-insert-server.ts', { HTTP_PORT: String(basePort) }, 'baseline listening');
try {
  const base = `http://127.0.0.1:${ingressPort}`;
  const org = await post(`${base}/admin/v1/organizations`, { name: 'bench', plan: 'pro' });
  const keys: string[] = [];
  for (let i = 0; i < KEYS; i++) keys.push((await post(`${base}/admin/v1/organizations/${org.id}/keys`, { name: `bench-${i}`, kind: 'full', rate_limit: 1000 })).key);
  const domain = await post(`${base}/api/v1/domains`, { name: `bench${Date.now()}.example.com` }, { authorization: `Bearer ${keys[0]}`, 'content-type': 'application/json' });
  await post(`${base}/admin/v1/domains/${domain.id}/verify`, {});
  const body = JSON.stringify({ from: `Bench <news@${domain.name}>`, to: ['reader@example.com'], subject: 'Hello', html: '<p>Hello from the benchmark</p>', text: 'Hello from the benchmark' });
  const lua = script(keys, body);

  // Warm both servers.
  await wrk(`http://127.0.0.1:${basePort}`, { connections: 10, seconds: 2, maxRequests: 20_000, script: lua });
  await wrk(base, { connections: 10, seconds: 2, maxRequests: 20_000, script: lua });

  console.log('measuring…');
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const bare = await wrk(`http://127.0.0.1:${basePort}`, { connections: 50, seconds: SECONDS, maxRequests: MAX_REQUESTS, script: lua });
    const ours = await wrk(base, { connections: 50, seconds: SECONDS, maxRequests: MAX_REQUESTS, script: lua });
    rounds.push({ baseline: bare, ingress: ours, ratio: Number((ours.requestsPerSecond / bare.requestsPerSecond).toFixed(3)) });
    console.log(`round ${round + 1}: baseline ${bare.requestsPerSecond}/s p99 ${bare.latencyMs.p99} ms; POST /emails ${ours.requestsPerSecond}/s p99 ${ours.latencyMs.p99} ms (non-2xx ${ours.non2xx3xx})`);
  }
  const ratio = medianBy(rounds, (r) => r.ratio).ratio;
  const result = {
    benchmark: 'emails',
    seconds: SECONDS,
    rounds,
    throughputRatio: ratio,
    p99Ms: { baseline: medianBy(rounds, (r) => r.baseline.latencyMs.p99).baseline.latencyMs.p99, ingress: medianBy(rounds, (r) => r.ingress.latencyMs.p99).ingress.latencyMs.p99 },
    targets: { throughputRatioAtLeast: 0.5 },
    met: { throughput: ratio >= 0.5, everyAnswer2xx: rounds.every((r) => r.ingress.non2xx3xx === 0 && r.baseline.non2xx3xx === 0) },
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('emails', result);
} finally {
  await ingress.stop();
  await baseline.stop();
  await deleteRunResources(topicPrefix);
}
