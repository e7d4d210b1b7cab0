// Analytics latency with 10 million scans in one workspace: the workspace
// summary (every group, last 30 days; served from the rollups) and a
// country-filtered summary (served from the scans table), against a baseline
// measured in the same run: the bare ClickHouse round trip of
// `SELECT count() FROM scans WHERE workspace_id = …`. Target: summary under 500 ms.
// The 10M scans are generated straight into ClickHouse once (about two minutes)
// and reused by later runs. Results: bench/results/analytics.json.
// Run: npx tsx bench/analytics.bench.ts   (BENCH_SCANS to change the 10,000,000)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createClickHouse } from '../src/platform/clickhouse/client.ts';
import { sql } from '../src/platform/clickhouse/literal.ts';
import { loadServiceConfig } from '../src/service.ts';
import { adminCreateKey, BENCH_ENV, deleteRunResources, freePort, ROOT, start, writeResult } from './lib.ts';

const SCANS = Number(process.env.BENCH_SCANS ?? 10_000_000);
const CHUNK = 200_000;
const RUNS = 20;
const STATE = `${ROOT}.stack/bench-analytics.json`;

const config = loadServiceConfig({ ...process.env, ...BENCH_ENV });
const ch = createClickHouse(config);
const port = freePort();
const base = `http://127.0.0.1:${port}`;
// Its own topic prefix, deleted at the end: the scans are generated straight into ClickHouse, the topics stay empty.
const topicPrefix = `bench-analytics-${Date.now()}`;
const ingress = await start('src/main.ts', { TOPIC_PREFIX: topicPrefix, HTTP_PORT: String(port), PUBLIC_BASE_URL: base, API_RATE_LIMIT_PER_MINUTE: '100000' }, 'ingress listening');

async function count(workspaceId: string): Promise<number> {
  return Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM scans WHERE workspace_id = ${workspaceId}`))[0]!.n);
}

/** Inserts SCANS scans over the last 30 days: 1000 links, 8 countries, 50 cities, 3 devices, 20 referrers, 5% bots. */
async function generate(workspaceId: string): Promise<void> {
  const start = Math.floor(Date.now() / 1000) - 30 * 86400;
  for (let offset = 0; offset < SCANS; offset += CHUNK) {
    const n = Math.min(CHUNK, SCANS - offset);
    await ch.exec(sql`
      INSERT INTO scans (scan_id, click_id, workspace_id, link_id, short_id, campaign_id, ts, destination, country, region, city, device, os, browser,
                         referrer, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content, is_bot, user_agent, visitor_id)
      SELECT toString(generateUUIDv4()), '', ${workspaceId}, concat('link-', toString(number % 1000)), concat('s', toString(number % 1000)), '',
             toDateTime(${start} + intDiv(number * ${30 * 86400}, ${SCANS})), 'https://example.com/',
             arrayElement(['US','GB','DE','FR','IN','BR','JP','CA'], (number % 8) + 1), '', concat('City ', toString(number % 50)),
             arrayElement(['desktop','mobile','tablet'], (number % 3) + 1), arrayElement(['iOS','Android','Windows','macOS'], (number % 4) + 1),
             arrayElement(['Chrome','Safari','Firefox'], (number % 3) + 1), '', if(number % 20 = 0, '', concat('ref', toString(number % 20), '.example')),
             arrayElement(['flyer','poster','mail','', ''], (number % 5) + 1), 'print', if(number % 2 = 0, 'spring', ''), '', '',
             if(number % 20 = 7, 1, 0), '', toString(number % 200000)
        FROM system.numbers LIMIT ${n} OFFSET ${offset}`);
    process.stdout.write(`\rgenerated ${offset + n} / ${SCANS}`);
  }
  process.stdout.write('\n');
}

async function time(fn: () => Promise<unknown>): Promise<number[]> {
  await fn(); // warm-up
  const out: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50Ms: Number(s[Math.floor(s.length / 2)]!.toFixed(1)), p99Ms: Number(s[s.length - 1]!.toFixed(1)), runs: s.length };
};

try {
  let state: { workspaceId: string; key: string } | undefined = existsSync(STATE) ? JSON.parse(readFileSync(STATE, 'utf8')) : undefined;
  if (state && (await fetch(`${base}/api/v1/links?limit=1`, { headers: { authorization: `Bearer ${state.key}` } })).status !== 200) state = undefined;
  if (!state || (await count(state.workspaceId)) < SCANS) {
    state = await adminCreateKey(base);
    writeFileSync(STATE, JSON.stringify(state));
    await generate(state.workspaceId);
  }
  const { workspaceId, key } = state;
  const scans = await count(workspaceId);
  const get = async (path: string) => {
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<{ totalScans: number }>;
  };
  const summaryBody = await get('/api/v1/analytics');
  const baseline = await time(() => ch.rows(sql`SELECT count() FROM scans WHERE workspace_id = ${workspaceId}`));
  const summary = await time(() => get('/api/v1/analytics'));
  const filtered = await time(() => get('/api/v1/analytics?country=GB'));
  const result = {
    benchmark: 'analytics',
    scansInWorkspace: scans,
    summaryTotalScans: summaryBody.totalScans,
    baselineCountQuery: stats(baseline),
    workspaceSummary: stats(summary),
    countryFilteredSummary: stats(filtered),
    summaryToBaselineRatio: Number((stats(summary).p50Ms / stats(baseline).p50Ms).toFixed(2)),
    targets: { workspaceSummaryBelowMs: 500 },
    met: { workspaceSummary: stats(summary).p99Ms < 500 },
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('analytics', result);
} finally {
  await ingress.stop();
  await ch.close();
  await deleteRunResources(topicPrefix);
}
