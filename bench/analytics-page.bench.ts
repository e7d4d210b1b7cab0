// The shared analytics page (issue 54) for a link with a million scans: its time to
// first byte (its start, sent before the numbers are read) and to its last byte (the
// numbers read and rendered) for each preset range, against baselines measured in
// the same rounds: the analytics
// API's answer for the same link and range (`GET /api/v1/links/:id/analytics`, the
// rollup queries the page runs too) and the bare ClickHouse round trip. Target: the
// page's first byte within 200 ms.
// The million scans are generated straight into ClickHouse's `scans` table once
// (INSERT … SELECT from system.numbers, so the materialized views fill every rollup as
// production's inserts do) over the last 30 days: 12 device/OS/browser profiles, 30
// countries, 20 referrers, two A/B variants, 60% by QR code, 2% bots, 300,000 visitors.
// The rollup rows they made are reported. Later runs reuse them. Measuring stops after
// ROUNDS rounds or BENCH_SECONDS (default 120) seconds, whichever comes first.
// Its own databases (BENCH_PAGE_DATABASE, default linkmail_bench_page), so the shared
// bench database's workspaces and migrations are not touched.
// Results: bench/results/analytics-page.json.
// Run: node bench/analytics-page.bench.ts   (BENCH_SCANS to change the 1,000,000)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { createClickHouse } from '../src/platform/clickhouse/client.ts';
import { sql, SqlFragment } from '../src/platform/clickhouse/literal.ts';
import { loadServiceConfig } from '../src/service.ts';
import { adminCreateKey, BENCH_ENV, deleteRunResources, freePort, ROOT, start, writeResult } from './lib.ts';

const SCANS = Number(process.env.BENCH_SCANS ?? 1_000_000);
const CHUNK = 250_000;
const ROUNDS = 30;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 120);
const TARGET_MS = 200;
const DATABASE = process.env.BENCH_PAGE_DATABASE ?? 'linkmail_bench_page';
const STATE = `${ROOT}.stack/bench-analytics-page.json`;
const DATABASES = { DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${DATABASE}`, CLICKHOUSE_DATABASE: DATABASE };

const config = loadServiceConfig({ ...process.env, ...BENCH_ENV, ...DATABASES });
const ch = createClickHouse(config);
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const topicPrefix = `bench-analytics-page-${Date.now()}`;
const ingress = await start('src/main.ts', { ...DATABASES, TOPIC_PREFIX: topicPrefix, HTTP_PORT: String(port), PUBLIC_BASE_URL: base, API_RATE_LIMIT_PER_MINUTE: '100000' }, 'ingress listening', 900_000);

interface State {
  workspaceId: string;
  key: string;
  linkId: string;
  shortId: string;
  shareId: string;
}

const count = async (linkId: string) => Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM scans WHERE link_id = ${linkId}`))[0]!.n);

async function setUp(): Promise<State> {
  const { workspaceId, key } = await adminCreateKey(base);
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const link = await post('/api/v1/links', {
    destination: 'https://example.com/menu', title: 'Bench menu',
    testVariants: [{ url: 'https://example.com/menu?v=a', percent: 50 }, { url: 'https://example.com/menu?v=b', percent: 50 }],
  });
  const share = await post(`/api/v1/links/${link.id}/analytics/shares`, {});
  return { workspaceId, key, linkId: link.id, shortId: link.shortId, shareId: share.id };
}

/** SCANS scans of the link over the last 30 days, in ClickHouse directly (the rollups' views run on each insert). */
async function generate(state: State): Promise<void> {
  const from = Math.floor(Date.now() / 1000) - 30 * 86400;
  const profiles = new SqlFragment(`[('mobile','iOS','Safari'),('mobile','iOS','Chrome'),('mobile','Android','Chrome'),('mobile','Android','Samsung Internet'),('mobile','Android','Firefox'),
    ('tablet','iOS','Safari'),('tablet','Android','Chrome'),('desktop','Windows','Chrome'),('desktop','Windows','Edge'),('desktop','macOS','Safari'),('desktop','macOS','Chrome'),('desktop','Linux','Firefox')]`);
  const countries = new SqlFragment(`['DE','US','FR','GB','NL','ES','IT','PL','SE','JP','BR','CA','AU','IN','MX','AT','CH','BE','DK','NO','FI','IE','PT','CZ','RO','HU','GR','TR','KR','ZA']`);
  const referrers = new SqlFragment(`['','','','','','instagram.com','t.co','www.google.com','news.example.org','www.facebook.com','l.instagram.com','www.linkedin.com','out.reddit.com','duckduckgo.com','www.bing.com','m.youtube.com','mail.google.com','outlook.live.com','web.whatsapp.com','t.me']`);
  for (let offset = 0; offset < SCANS; offset += CHUNK) {
    const n = Math.min(CHUNK, SCANS - offset);
    await ch.exec(sql`
      INSERT INTO scans_input (scan_id, click_id, workspace_id, link_id, short_id, campaign_id, ts, destination, country, region, city, device, os, browser,
                         referrer, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content, is_bot, user_agent, visitor_id, variant, trigger)
      SELECT toString(generateUUIDv4()), '', ${state.workspaceId}, ${state.linkId}, ${state.shortId}, '',
             toDateTime(${from} + intDiv(number * ${30 * 86400}, ${SCANS})), 'https://example.com/menu',
             arrayElement(${countries}, (cityHash64(number, 1) % 30) + 1), '', '',
             tupleElement(arrayElement(${profiles}, (cityHash64(number, 2) % 12) + 1), 1),
             tupleElement(arrayElement(${profiles}, (cityHash64(number, 2) % 12) + 1), 2),
             tupleElement(arrayElement(${profiles}, (cityHash64(number, 2) % 12) + 1), 3),
             '', arrayElement(${referrers}, (cityHash64(number, 3) % 20) + 1),
             if(number % 4 = 0, 'poster', ''), if(number % 4 = 0, 'print', ''), '', '', '',
             if(number % 50 = 7, 1, 0), '', toString(cityHash64(number, 4) % 300000),
             if(number % 2 = 0, 'https://example.com/menu?v=a', 'https://example.com/menu?v=b'), if(cityHash64(number, 5) % 10 < 6, 'qr', 'link')
        FROM system.numbers LIMIT ${n} OFFSET ${offset}`);
    process.stdout.write(`\rgenerated ${offset + n} / ${SCANS}`);
  }
  process.stdout.write('\n');
}

/** The rows the link's scans made in each rollup the page reads. */
async function rollupRows(linkId: string): Promise<Record<string, number>> {
  const tables = ['scans_link_dims', 'scans_link_dims_daily', 'scans_link_visitors', 'scans_link_visitors_daily', 'scans_link_variants', 'scans_link_triggers'];
  const out: Record<string, number> = {};
  for (const t of tables) out[t] = Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM ${new SqlFragment(t)} WHERE link_id = ${linkId}`))[0]!.n);
  return out;
}

/** Milliseconds to the response's first byte (its status line and headers), and the body read to the end. */
function firstByte(path: string, headers: Record<string, string> = {}): Promise<{ ms: number; totalMs: number; status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const req = request(`${base}${path}`, { headers, agent: false }, (res) => {
      const ms = performance.now() - t;
      let bytes = 0;
      res.on('data', (d: Buffer) => (bytes += d.length));
      res.on('end', () => resolve({ ms, totalMs: performance.now() - t, status: res.statusCode!, bytes }));
    });
    req.on('error', reject);
    req.end();
  });
}

const r1 = (x: number) => Number(x.toFixed(1));
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const median = (xs: number[]) => quantile(xs, 0.5);

try {
  let state: State | undefined = existsSync(STATE) ? JSON.parse(readFileSync(STATE, 'utf8')) : undefined;
  if (state && (await fetch(`${base}/analytics/${state.shareId}`)).status !== 200) state = undefined;
  if (!state || (await count(state.linkId)) < SCANS) {
    state = await setUp();
    writeFileSync(STATE, JSON.stringify(state));
    await generate(state);
  }
  const { key, linkId, shareId } = state;
  const scans = await count(linkId);
  const rows = await rollupRows(linkId);
  const auth = { authorization: `Bearer ${key}` };
  const ranges = { '24h': 1, '7d': 7, '30d': 30, '90d': 90 } as const;
  const scenarios: Record<string, { page: string; api: () => string }> = {};
  for (const [name, days] of Object.entries(ranges)) {
    scenarios[name] = {
      page: `/analytics/${shareId}?range=${name}`,
      // The same range and buckets as the page's (page-range.ts): from days back to now, hours up to 7 days.
      api: () => `/api/v1/links/${linkId}/analytics?from=${new Date(Date.now() - days * 86_400_000).toISOString()}&to=${new Date().toISOString()}&interval=${days <= 7 ? 'hour' : 'day'}`,
    };
  }
  // Warm-up, and a check that each page shows the scans.
  for (const [name, s] of Object.entries(scenarios)) {
    const page = await firstByte(s.page);
    const api = await firstByte(s.api(), auth);
    if (page.status !== 200 || api.status !== 200) throw new Error(`${name}: page ${page.status}, API ${api.status}`);
  }
  const rounds: { clickhouseMs: number; page: Record<string, number>; pageTotal: Record<string, number>; api: Record<string, number>; tenPages: number; tenApi: number }[] = [];
  // Ten people opening the page (30 days) at once, and ten API calls for the same at once: the last one's last byte.
  const together = async (path: string, headers: Record<string, string> = {}) => Math.max(...(await Promise.all(Array.from({ length: 10 }, () => firstByte(path, headers)))).map((r) => r.totalMs));
  let pageBytes: Record<string, number> = {};
  const deadline = Date.now() + SECONDS * 1000;
  while (rounds.length < ROUNDS && (rounds.length < 5 || Date.now() < deadline)) {
    const t = performance.now();
    await ch.rows(sql`SELECT 1`);
    const clickhouseMs = performance.now() - t;
    const round = { clickhouseMs, page: {} as Record<string, number>, pageTotal: {} as Record<string, number>, api: {} as Record<string, number>, tenPages: 0, tenApi: 0 };
    for (const [name, s] of Object.entries(scenarios)) {
      const page = await firstByte(s.page);
      round.page[name] = page.ms;
      round.pageTotal[name] = page.totalMs;
      pageBytes = { ...pageBytes, [name]: page.bytes };
      round.api[name] = (await firstByte(s.api(), auth)).totalMs;
    }
    round.tenPages = await together(scenarios['30d']!.page);
    round.tenApi = await together(scenarios['30d']!.api(), auth);
    rounds.push(round);
    process.stdout.write(`\rround ${rounds.length}`);
  }
  process.stdout.write('\n');
  const results = Object.fromEntries(Object.keys(scenarios).map((name) => {
    const page = rounds.map((r) => r.page[name]!);
    const api = rounds.map((r) => r.api[name]!);
    return [name, {
      path: `/analytics/:shareId?range=${name}`,
      pageBytes: pageBytes[name],
      firstByteMs: { p50: r1(median(page)), p95: r1(quantile(page, 0.95)), max: r1(Math.max(...page)) },
      // The whole page: its numbers come after its start (page-routes.ts), when ClickHouse has answered.
      lastByteMs: { p50: r1(median(rounds.map((r) => r.pageTotal[name]!))), p95: r1(quantile(rounds.map((r) => r.pageTotal[name]!), 0.95)) },
      apiAnswerMs: { p50: r1(median(api)), p95: r1(quantile(api, 0.95)) },
      // Per round, the whole page against the API's answer for the same link and range.
      lastByteRatioToApi: Number(median(rounds.map((r) => r.pageTotal[name]! / r.api[name]!)).toFixed(2)),
    }];
  }));
  const result = {
    benchmark: 'analytics-page',
    scansOfTheLink: scans,
    rollupRowsOfTheLink: rows,
    rounds: rounds.length,
    baselineClickHouseRoundTrip: { p50Ms: r1(median(rounds.map((r) => r.clickhouseMs))) },
    scenarios: results,
    // Identical loads at once share one read (src/links/analytics-page/in-flight.ts); the API's calls each read.
    tenAtOnce30d: {
      pagesLastByteMsP50: r1(median(rounds.map((r) => r.tenPages))),
      apiLastAnswerMsP50: r1(median(rounds.map((r) => r.tenApi))),
      ratio: Number(median(rounds.map((r) => r.tenPages / r.tenApi)).toFixed(2)),
    },
    loadAverageAtEnd: loadavg()[0],
    target: { firstByteP95BelowMs: TARGET_MS },
    met: Object.fromEntries(Object.entries(results).map(([name, r]) => [name, { firstByteP95: r.firstByteMs.p95 < TARGET_MS, lastByteP50: r.lastByteMs.p50 < TARGET_MS, lastByteP95: r.lastByteMs.p95 < TARGET_MS }])),
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('analytics-page', result);
} finally {
  await ingress.stop();
  await ch.close();
  await deleteRunResources(topicPrefix);
}
