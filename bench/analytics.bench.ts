// Analytics latency with 10 million scans in one workspace: the workspace
// summary (every group, last 30 days) unfiltered and under every filter
// combination the API offers (country, linkId, tag, campaignId and their
// combinations, and the link endpoint with and without country), each served
// from a rollup, against a baseline measured in the same run: the bare
// ClickHouse round trip of `SELECT count() FROM scans WHERE workspace_id = …`.
// Baseline and every scenario alternate within each round (this machine's speed
// drifts); a scenario's figure is its median, its ratio the median of its
// per-round ratios to the baseline. Target: every scenario under 500 ms.
// Also the storage of every scans table (ClickHouse system.parts).
// The workspace's 1000 links are real (tags and campaigns in Postgres, so tag
// and campaign filters resolve as in production); the 10M scans are generated
// straight into ClickHouse once (several minutes: the rollups' views run on
// every insert) and reused by later runs. Measuring stops after ROUNDS rounds
// or BENCH_SECONDS (default 300) seconds, whichever comes first.
// Results: bench/results/analytics.json.
// Run: node bench/analytics.bench.ts   (BENCH_SCANS to change the 10,000,000)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createClickHouse } from '../src/platform/clickhouse/client.ts';
import { sql, SqlFragment } from '../src/platform/clickhouse/literal.ts';
import { loadServiceConfig } from '../src/service.ts';
import { adminCreateKey, BENCH_ENV, deleteRunResources, freePort, medianBy, ROOT, start, writeResult } from './lib.ts';

const SCANS = Number(process.env.BENCH_SCANS ?? 10_000_000);
const CHUNK = 200_000;
const ROUNDS = 15;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 300);
const LINKS = 1000;
const STATE = `${ROOT}.stack/bench-analytics-v2.json`;

const config = loadServiceConfig({ ...process.env, ...BENCH_ENV });
const ch = createClickHouse(config);
const port = freePort();
const base = `http://127.0.0.1:${port}`;
// Its own topic prefix, deleted at the end: the scans are generated straight into ClickHouse, the topics stay empty.
const topicPrefix = `bench-analytics-${Date.now()}`;
const ingress = await start('src/main.ts', { TOPIC_PREFIX: topicPrefix, HTTP_PORT: String(port), PUBLIC_BASE_URL: base, API_RATE_LIMIT_PER_MINUTE: '100000' }, 'ingress listening', 900_000);

async function count(workspaceId: string): Promise<number> {
  return Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM scans WHERE workspace_id = ${workspaceId}`))[0]!.n);
}

interface State {
  workspaceId: string;
  key: string;
  links: { id: string; shortId: string }[];
  campaignIds: string[];
}

/**
 * 1000 links: link i has tags `group-<i % 10>` (100 links each) and, unless i % 10 = 0, `wide` (900 links);
 * it is in campaign floor(i / 100) (10 campaigns of 100 links).
 */
async function createLinks(key: string): Promise<Pick<State, 'links' | 'campaignIds'>> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const campaignIds: string[] = [];
  for (let c = 0; c < 10; c++) campaignIds.push((await post('/api/v1/campaigns', { name: `bench-${c}` })).id);
  const links: State['links'] = [];
  for (let offset = 0; offset < LINKS; offset += 100) {
    const operations = Array.from({ length: 100 }, (_, j) => {
      const i = offset + j;
      return { action: 'create', link: { destination: `https://example.com/${i}`, tags: [`group-${i % 10}`, ...(i % 10 !== 0 ? ['wide'] : [])], campaignId: campaignIds[Math.floor(i / 100)] } };
    });
    const body = await post('/api/v1/links/bulk', { operations });
    for (const r of body.results) links.push({ id: r.link.id, shortId: r.link.shortId });
  }
  return { links, campaignIds };
}

/** Inserts SCANS scans over the last 30 days: the 1000 links evenly, 8 countries, 50 cities, 3 devices, 20 referrers, 5% bots. */
async function generate(state: State): Promise<void> {
  const start = Math.floor(Date.now() / 1000) - 30 * 86400;
  // Link ids and short IDs come from our own API (UUIDs, base62 or chosen [A-Za-z0-9_-]), checked again here before they enter SQL.
  if (!state.links.every((l) => /^[0-9a-f-]{36}$/.test(l.id) && /^[A-Za-z0-9_-]+$/.test(l.shortId))) throw new Error('unexpected link ids');
  const ids = new SqlFragment(`[${state.links.map((l) => `'${l.id}'`).join(',')}]`);
  const shortIds = new SqlFragment(`[${state.links.map((l) => `'${l.shortId}'`).join(',')}]`);
  for (let offset = 0; offset < SCANS; offset += CHUNK) {
    const n = Math.min(CHUNK, SCANS - offset);
    await ch.exec(sql`
      INSERT INTO scans_input (scan_id, click_id, workspace_id, link_id, short_id, campaign_id, ts, destination, country, region, city, device, os, browser,
                         referrer, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content, is_bot, user_agent, visitor_id)
      SELECT toString(generateUUIDv4()), '', ${state.workspaceId}, arrayElement(${ids}, (number % ${LINKS}) + 1), arrayElement(${shortIds}, (number % ${LINKS}) + 1), '',
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

const ms = (x: number) => Number(x.toFixed(1));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Rows and bytes of the scans table and its rollups (active parts), each also as a share of the scans table. */
async function storage() {
  const rows = await ch.rows<{ table: string; rows: string; bytes: string; parts: string }>(sql`
    SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes, count() AS parts FROM system.parts
     WHERE active AND database = currentDatabase() AND table LIKE 'scans%' GROUP BY table ORDER BY table`);
  const raw = Number(rows.find((r) => r.table === 'scans')?.bytes ?? 0);
  return Object.fromEntries(rows.map((r) => [r.table, { rows: Number(r.rows), bytesOnDisk: Number(r.bytes), parts: Number(r.parts), ofScansTable: Number((Number(r.bytes) / raw).toFixed(3)) }]));
}

try {
  let state: State | undefined = existsSync(STATE) ? JSON.parse(readFileSync(STATE, 'utf8')) : undefined;
  if (state && (await fetch(`${base}/api/v1/links?limit=1`, { headers: { authorization: `Bearer ${state.key}` } })).status !== 200) state = undefined;
  if (!state || (await count(state.workspaceId)) < SCANS) {
    const created = await adminCreateKey(base);
    state = { ...created, ...(await createLinks(created.key)) };
    writeFileSync(STATE, JSON.stringify(state));
    await generate(state);
  }
  const { workspaceId, key, links, campaignIds } = state;
  const scans = await count(workspaceId);
  const get = async (path: string) => {
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<{ totalScans: number }>;
  };
  const link = links[8]!.id; // a link of human scans (every 20th scan is a bot: links 7, 27, …)
  const scenarios: Record<string, string> = {
    unfiltered: '/api/v1/analytics',
    country: '/api/v1/analytics?country=GB',
    linkId: `/api/v1/analytics?linkId=${link}`,
    tag100Links: '/api/v1/analytics?tag=group-3',
    tag900Links: '/api/v1/analytics?tag=wide',
    campaign: `/api/v1/analytics?campaignId=${campaignIds[4]}`,
    countryAndLinkId: `/api/v1/analytics?country=US&linkId=${link}`,
    countryAndTag900Links: '/api/v1/analytics?country=GB&tag=wide',
    countryAndCampaign: `/api/v1/analytics?country=DE&campaignId=${campaignIds[4]}`,
    tagAndCampaign: `/api/v1/analytics?tag=wide&campaignId=${campaignIds[4]}`,
    everyFilter: `/api/v1/analytics?country=US&tag=wide&campaignId=${campaignIds[0]}&linkId=${link}`,
    linkEndpoint: `/api/v1/links/${link}/analytics`,
    linkEndpointAndCountry: `/api/v1/links/${link}/analytics?country=US`,
  };
  const totals: Record<string, number> = {};
  for (const [name, path] of Object.entries(scenarios)) totals[name] = (await get(path)).totalScans; // warm-up
  const timed = async (fn: () => Promise<unknown>) => {
    const t = performance.now();
    await fn();
    return performance.now() - t;
  };
  const rounds: { baselineMs: number; ms: Record<string, number> }[] = [];
  const deadline = Date.now() + SECONDS * 1000;
  while (rounds.length < ROUNDS && (rounds.length < 3 || Date.now() < deadline)) {
    const baselineMs = await timed(() => ch.rows(sql`SELECT count() FROM scans WHERE workspace_id = ${workspaceId}`));
    const round: Record<string, number> = {};
    for (const [name, path] of Object.entries(scenarios)) round[name] = await timed(() => get(path));
    rounds.push({ baselineMs, ms: round });
    process.stdout.write(`\rround ${rounds.length}`);
  }
  process.stdout.write('\n');
  const baseline = rounds.map((r) => r.baselineMs);
  const results = Object.fromEntries(Object.entries(scenarios).map(([name, path]) => {
    const xs = rounds.map((r) => r.ms[name]!);
    return [name, {
      path: path.replace(link, ':link').replace(/campaignId=[0-9a-f-]+/, 'campaignId=:campaign'),
      totalScans: totals[name],
      p50Ms: ms(median(xs)),
      maxMs: ms(Math.max(...xs)),
      ratioToBaseline: Number(medianBy(rounds.map((r) => r.ms[name]! / r.baselineMs), (x) => x).toFixed(2)),
    }];
  }));
  const result = {
    benchmark: 'analytics',
    scansInWorkspace: scans,
    links: links.length,
    rounds: rounds.length,
    baselineCountQuery: { p50Ms: ms(median(baseline)), maxMs: ms(Math.max(...baseline)) },
    scenarios: results,
    storage: await storage(),
    targets: { everyScenarioP50BelowMs: 500 },
    met: { everyScenarioP50: Object.values(results).every((r) => r.p50Ms < 500), everyScenarioMax: Object.values(results).every((r) => r.maxMs < 500) },
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('analytics', result);
} finally {
  await ingress.stop();
  await ch.close();
  await deleteRunResources(topicPrefix);
}
