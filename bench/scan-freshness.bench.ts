// Scan freshness: the time from a redirect to its scan being visible in
// ClickHouse (what analytics read), measured by probe redirects every 100 ms,
// once with the pipeline idle (the baseline) and once under a sustained
// redirect load, in the same run. Target: p99 under 2 s under load.
// Results: bench/results/scan-freshness.json. Run: node bench/scan-freshness.bench.ts
import { ClickIds } from '../src/links/scans/click-id.ts';
import { createClickHouse } from '../src/platform/clickhouse/client.ts';
import { inList, sql } from '../src/platform/clickhouse/literal.ts';
import { loadServiceConfig } from '../src/service.ts';
import { adminCreateKey, BENCH_ENV, deleteRunResources, freePort, load, start, writeResult } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const LOAD_RATE = Number(process.env.BENCH_LOAD_RATE ?? 500);

// Topics and journal of this run only: earlier benchmarks leave unconsumed scans behind, which a
// new sink group would have to read first.
const RUN = { TOPIC_PREFIX: `bench-fresh-${Date.now()}`, SCAN_JOURNAL_DIR: `${BENCH_ENV.SCAN_JOURNAL_DIR}-fresh-${Date.now()}` };
const config = loadServiceConfig({ ...process.env, ...BENCH_ENV, ...RUN });
const ch = createClickHouse(config);
const clickIds = new ClickIds(config.CLICK_ID_SECRET);
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const ingress = await start('src/main.ts', { ...RUN, HTTP_PORT: String(port), REDIRECTS_PER_MINUTE_PER_IP: '1000000000', PUBLIC_BASE_URL: base }, 'ingress listening');
const sink = await start('workers/links-scan-sink.ts', { ...RUN, LOG_LEVEL: 'info' }, 'worker process ready');

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** Probes every 100 ms for `seconds`; returns each probe's redirect-to-visible time in ms. */
async function probe(workspaceId: string, shortId: string, seconds: number): Promise<number[]> {
  const pending = new Map<string, number>();
  const seen: number[] = [];
  let probing = true;
  const poller = (async () => {
    while (probing || pending.size > 0) {
      if (pending.size > 0) {
        const rows = await ch.rows<{ scan_id: string }>(sql`SELECT scan_id FROM scans WHERE workspace_id = ${workspaceId} AND scan_id IN ${inList([...pending.keys()])}`);
        const now = Date.now();
        for (const { scan_id } of rows) {
          const sent = pending.get(scan_id);
          if (sent !== undefined) seen.push(now - sent);
          pending.delete(scan_id);
        }
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const sent = Date.now();
    const res = await fetch(`${base}/${shortId}`, { redirect: 'manual', headers: { 'x-forwarded-for': '81.2.69.160' } });
    const cid = /svc_cid=([A-Za-z0-9_-]+)/.exec(res.headers.get('location') ?? '')?.[1];
    const claims = cid ? clickIds.verify(cid) : undefined;
    if (claims) pending.set(claims.scanId, sent);
    await new Promise((r) => setTimeout(r, 100));
  }
  probing = false;
  const deadline = Date.now() + 15_000;
  while (pending.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const lost = pending.size;
  pending.clear();
  await poller;
  if (lost > 0) console.warn(`${lost} probes not visible within 15 s`);
  return seen;
}

try {
  const { key, workspaceId } = await adminCreateKey(base);
  const create = async (destination: string) =>
    ((await (await fetch(`${base}/api/v1/links`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ destination }) })).json()) as { shortId: string }).shortId;
  const loadLink = await create('https://example.com/load');
  const probeLink = await create('https://example.com/probe');
  await new Promise((r) => setTimeout(r, 2000));

  const idle = await probe(workspaceId, probeLink, Math.min(10, SECONDS));
  const background = load(`${base}/${loadLink}`, { connections: 10, seconds: SECONDS + 2, rate: LOAD_RATE, maxRequests: LOAD_RATE * (SECONDS + 2) });
  await new Promise((r) => setTimeout(r, 1000));
  const loaded = await probe(workspaceId, probeLink, SECONDS);
  const loadResult = await background;
  const summary = (xs: number[]) => ({ probes: xs.length, p50Ms: percentile(xs, 50), p99Ms: percentile(xs, 99), maxMs: Math.max(...xs) });
  const result = {
    benchmark: 'scan-freshness',
    seconds: SECONDS,
    idle: summary(idle),
    underLoad: { loadRequestsPerSecond: loadResult.requestsPerSecond, ...summary(loaded) },
    p99Ratio: Number((percentile(loaded, 99) / percentile(idle, 99)).toFixed(3)),
    targets: { p99UnderLoadBelowMs: 2000 },
    met: { p99UnderLoad: percentile(loaded, 99) < 2000 },
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('scan-freshness', result);
} finally {
  await sink.stop();
  await ingress.stop();
  await ch.close();
  await deleteRunResources(RUN.TOPIC_PREFIX);
}
