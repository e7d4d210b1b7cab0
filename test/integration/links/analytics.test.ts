// Analytics answers checked against counts computed independently from
// generated scan events, which go through the real pipeline (scans topic →
// sink worker → ClickHouse and its rollups). Every rollup is covered: the
// workspace's (no filter), the country's, the links' (link, tag, campaign,
// each with or without a country); unique visitors are compared with the same
// estimate computed over the scans table itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { hostWorkers } from '../../../src/platform/actors/host.ts';
import { inList, sql } from '../../../src/platform/clickhouse/literal.ts';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { scansTopic } from '../../../topics/scans.ts';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';
import { scansStored, scanSink } from '../../support/links/scans.ts';

const HOUR = 3_600_000;
let ingress: TestIngress;
let api: ReturnType<typeof client>;
let events: ScanEvent[];
let links: { id: string; shortId: string }[];
let campaignId: string;
let stopSink: () => Promise<void>;
const now = Date.now();
const from = new Date(Math.floor((now - 4 * 24 * HOUR) / HOUR) * HOUR).toISOString();
const to = new Date(Math.ceil(now / HOUR) * HOUR).toISOString();

// A small deterministic generator, so a failure can be reproduced.
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

function countBy<T>(items: T[], key: (t: T) => string): Map<string, number> {
  const m = new Map<string, number>();
  for (const i of items) m.set(key(i), (m.get(key(i)) ?? 0) + 1);
  return m;
}

/** The ranked list the API returns: by count, then value, the top n, without empty values. */
function ranked(items: ScanEvent[], key: (e: ScanEvent) => string, n = 100, keepEmpty = false) {
  return [...countBy(items, key)]
    .filter(([v]) => keepEmpty || v !== '')
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, n)
    .map(([value, count]) => ({ value, count }));
}

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  const ws = await workspaceWithKey(ingress.url);
  api = client(ingress.url, ws.key);
  campaignId = (await api.post('/api/v1/campaigns', { name: 'Generated' })).body.id;
  links = [];
  for (const [i, extra] of [{ tags: ['gen'] }, { campaignId }, { tags: ['gen'], campaignId }, {}].entries()) {
    const { body } = await api.post('/api/v1/links', { destination: `https://example.com/gen/${i}`, ...extra });
    links.push({ id: body.id, shortId: body.shortId });
  }
  const places = [['US', 'New York'], ['US', 'Chicago'], ['GB', 'London'], ['DE', 'Berlin'], ['FR', ''], ['', '']] as const;
  events = Array.from({ length: 3000 }, () => {
    const link = pick(links);
    const [country, city] = pick(places);
    const isBot = rand() < 0.05;
    return {
      scanId: randomUUID(), clickId: 'c', workspaceId: ws.workspaceId, linkId: link.id, shortId: link.shortId, campaignId: null,
      timestamp: now - 3 * 24 * HOUR + Math.floor(rand() * (3 * 24 - 1) * HOUR),
      destination: 'https://example.com/', country: country || null, region: null, city: city || null,
      device: isBot ? 'bot' : pick(['desktop', 'mobile', 'tablet']), os: pick(['iOS', 'Android', 'Windows', null]),
      browser: pick(['Chrome', 'Safari', 'Firefox']), referrer: null, referrerHost: pick(['news.example.org', 'social.example', null]),
      utmSource: pick(['flyer', 'poster', null]), utmMedium: pick(['print', null]), utmCampaign: pick(['spring', null]), utmTerm: null, utmContent: pick(['a', 'b', null]),
      isBot, userAgent: null, visitorId: `v${Math.floor(rand() * 800)}`,
    } satisfies ScanEvent;
  });
  // Published as the ingress publishes them; some twice, as at-least-once delivery may.
  const messages = events.map((e) => ({ key: e.workspaceId, value: e }));
  for (let i = 0; i < messages.length; i += 500) await ingress.platform.publisher.publish(scansTopic, messages.slice(i, i + 500));
  await ingress.platform.publisher.publish(scansTopic, messages.slice(0, 300));
  const [runtime] = await hostWorkers(ingress.platform, [scanSink(ingress.platform)]);
  stopSink = () => runtime!.stop();
  await eventually(() => scansStored(ingress.platform.clickhouse, ws.workspaceId, events.length), 60_000, 250);
}, 120_000);

afterAll(async () => {
  await stopSink?.();
  await ingress?.close();
});

const humans = () => events.filter((e) => !e.isBot);
const get = async (path: string) => {
  const res = await api.get(path);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

function expectGroups(body: any, subset: ScanEvent[]) {
  expect(body.totalScans).toBe(subset.length);
  expect(body.countries).toEqual(ranked(subset, (e) => e.country ?? '').map((r) => ({ country: r.value, count: r.count })));
  expect(body.cities).toEqual(ranked(subset, (e) => (e.city ? `${e.country}\t${e.city}` : '')).map((r) => ({ country: r.value.split('\t')[0], city: r.value.split('\t')[1], count: r.count })));
  expect(body.devices).toEqual(ranked(subset, (e) => e.device).map((r) => ({ device: r.value, count: r.count })));
  expect(body.os).toEqual(ranked(subset, (e) => e.os ?? '').map((r) => ({ os: r.value, count: r.count })));
  expect(body.browsers).toEqual(ranked(subset, (e) => e.browser ?? '').map((r) => ({ browser: r.value, count: r.count })));
  expect(body.referrers).toEqual(ranked(subset, (e) => e.referrerHost ?? '', 100, true).map((r) => ({ referrer: r.value || '(direct)', count: r.count })));
  expect(body.utm.sources).toEqual(ranked(subset, (e) => e.utmSource ?? ''));
  expect(body.utm.mediums).toEqual(ranked(subset, (e) => e.utmMedium ?? ''));
  expect(body.utm.campaigns).toEqual(ranked(subset, (e) => e.utmCampaign ?? ''));
  expect(body.utm.contents).toEqual(ranked(subset, (e) => e.utmContent ?? ''));
  expect(body.utm.terms).toEqual([]);
  expect(body.topLinks).toEqual(ranked(subset, (e) => e.shortId).map((r) => ({ shortId: r.value, linkId: links.find((l) => l.shortId === r.value)!.id, scans: r.count })));
  const daily = countBy(subset, (e) => new Date(Math.floor(e.timestamp / 86_400_000) * 86_400_000).toISOString());
  const series = new Map(body.timeseries.map((p: any) => [p.start, p.scans]));
  for (const [day, n] of daily) expect(series.get(day), day).toBe(n);
  expect(body.timeseries.reduce((n: number, p: any) => n + p.scans, 0)).toBe(subset.length);
  const distinct = new Set(subset.map((e) => e.visitorId)).size;
  expect(Math.abs(body.uniqueVisitors - distinct)).toBeLessThanOrEqual(Math.ceil(distinct * 0.05));
}

/** Unique visitors, in total and per bucket, equal uniqHLL12 over the subset's rows of the scans table (the rollups merge the same sketches). */
async function expectVisitorsAsScansTable(body: any, subset: ScanEvent[], interval: 'day' | 'hour') {
  if (subset.length === 0) {
    expect(body.uniqueVisitors).toBe(0);
    return;
  }
  const bucket = interval === 'day' ? sql`toStartOfDay(ts, 'UTC')` : sql`toStartOfHour(ts)`;
  const rows = (time: typeof bucket) => ingress.platform.clickhouse.rows<{ t: string; v: string }>(
    sql`SELECT toUnixTimestamp(${time}) AS t, uniqHLL12(visitor_id) AS v FROM scans WHERE workspace_id = ${subset[0]!.workspaceId} AND scan_id IN ${inList(subset.map((e) => e.scanId))} GROUP BY t`,
  );
  const [total] = await rows(sql`toDateTime(0)`);
  expect(body.uniqueVisitors).toBe(Number(total!.v));
  const perBucket = new Map((await rows(bucket)).map((r) => [new Date(Number(r.t) * 1000).toISOString(), Number(r.v)]));
  for (const p of body.timeseries) expect(p.uniqueVisitors, p.start).toBe(perBucket.get(p.start) ?? 0);
}

describe('workspace analytics', () => {
  it('matches the generated events without filters (rollups), bots excluded by default', async () => {
    const body = await get(`/api/v1/analytics?from=${from}&to=${to}&interval=day&top=100`);
    expect(body.interval).toBe('day');
    expectGroups(body, humans());
  });

  it('counts bots on request', async () => {
    const body = await get(`/api/v1/analytics?from=${from}&to=${to}&interval=day&top=100&includeBots=true`);
    expectGroups(body, events);
  });

  it('matches with a country, link, tag or campaign filter (scans table)', async () => {
    expectGroups(await get(`/api/v1/analytics?from=${from}&to=${to}&interval=day&top=100&country=gb`), humans().filter((e) => e.country === 'GB'));
    expectGroups(await get(`/api/v1/analytics?from=${from}&to=${to}&interval=day&top=100&linkId=${links[0]!.id}`), humans().filter((e) => e.linkId === links[0]!.id));
    const tagged = new Set([links[0]!.id, links[2]!.id]);
    expectGroups(await get(`/api/v1/analytics?from=${from}&to=${to}&interval=day&top=100&tag=gen`), humans().filter((e) => tagged.has(e.linkId)));
    const inCampaign = new Set([links[1]!.id, links[2]!.id]);
    expectGroups(await get(`/api/v1/analytics?from=${from}&to=${to}&interval=day&top=100&campaignId=${campaignId}`), humans().filter((e) => inCampaign.has(e.linkId)));
    expect((await get(`/api/v1/analytics?from=${from}&to=${to}&tag=nothing-has-this`)).totalScans).toBe(0);
  });

  it('matches every filter combination, with and without bots, with unique visitors as the scans table estimates them', async () => {
    const [l0, l1, l2] = [links[0]!.id, links[1]!.id, links[2]!.id];
    const tagged = new Set([l0, l2]);
    const inCampaign = new Set([l1, l2]);
    const cases: { query: string; keep: (e: ScanEvent) => boolean }[] = [
      { query: `country=gb&linkId=${l0}`, keep: (e) => e.country === 'GB' && e.linkId === l0 },
      { query: 'country=US&tag=gen', keep: (e) => e.country === 'US' && tagged.has(e.linkId) },
      { query: `country=de&campaignId=${campaignId}`, keep: (e) => e.country === 'DE' && inCampaign.has(e.linkId) },
      { query: `tag=gen&campaignId=${campaignId}`, keep: (e) => e.linkId === l2 },
      { query: `country=fr&tag=gen&campaignId=${campaignId}&linkId=${l2}`, keep: (e) => e.country === 'FR' && e.linkId === l2 },
      { query: `linkId=${l1}`, keep: (e) => e.linkId === l1 },
      { query: 'country=FR', keep: (e) => e.country === 'FR' },
    ];
    for (const { query, keep } of cases) {
      for (const includeBots of [false, true]) {
        const subset = (includeBots ? events : humans()).filter(keep);
        const body = await get(`/api/v1/analytics?from=${from}&to=${to}&interval=day&top=100&${query}&includeBots=${includeBots}`);
        expectGroups(body, subset);
        await expectVisitorsAsScansTable(body, subset, 'day');
      }
    }
    expect((await get(`/api/v1/analytics?from=${from}&to=${to}&country=GB&tag=nothing-has-this`)).totalScans).toBe(0);
    expect((await get(`/api/v1/analytics?from=${from}&to=${to}&country=ZZ`)).totalScans).toBe(0);
  });

  it('gives filtered hourly buckets that match the scans', async () => {
    const subset = humans().filter((e) => e.country === 'US' && (e.linkId === links[0]!.id || e.linkId === links[2]!.id));
    const body = await get(`/api/v1/analytics?from=${from}&to=${to}&interval=hour&top=100&tag=gen&country=us`);
    expect(body.totalScans).toBe(subset.length);
    expect(body.timeseries).toHaveLength((Date.parse(to) - Date.parse(from)) / HOUR);
    const hourly = countBy(subset, (e) => new Date(Math.floor(e.timestamp / HOUR) * HOUR).toISOString());
    for (const p of body.timeseries) expect(p.scans, p.start).toBe(hourly.get(p.start) ?? 0);
    await expectVisitorsAsScansTable(body, subset, 'hour');
  });

  it('gives hourly buckets that add up, with zeros where nothing happened', async () => {
    const body = await get(`/api/v1/analytics?from=${from}&to=${to}&interval=hour`);
    expect(body.timeseries).toHaveLength((Date.parse(to) - Date.parse(from)) / HOUR);
    expect(body.timeseries.reduce((n: number, p: any) => n + p.scans, 0)).toBe(humans().length);
    const hourly = countBy(humans(), (e) => new Date(Math.floor(e.timestamp / HOUR) * HOUR).toISOString());
    for (const p of body.timeseries) expect(p.scans).toBe(hourly.get(p.start) ?? 0);
  });

  it('refuses bad ranges and intervals', async () => {
    expect((await api.get(`/api/v1/analytics?from=${to}&to=${from}`)).body.error.code).toBe('invalid_range');
    expect((await api.get('/api/v1/analytics?from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z')).body.error.code).toBe('invalid_range');
    expect((await api.get('/api/v1/analytics?from=2025-01-01T00:00:00Z&to=2025-06-01T00:00:00Z&interval=hour')).body.error.code).toBe('too_many_buckets');
    expect((await api.get('/api/v1/analytics?interval=minute')).status).toBe(400);
    expect((await api.get('/api/v1/analytics?top=101')).status).toBe(400);
  });
});

describe('link analytics', () => {
  it("matches the link's events and answers 404 for other ids", async () => {
    const link = links[3]!;
    expectGroups(await get(`/api/v1/links/${link.id}/analytics?from=${from}&to=${to}&interval=day&top=100`), humans().filter((e) => e.linkId === link.id));
    expect((await api.get(`/api/v1/links/00000000-0000-4000-8000-000000000000/analytics`)).status).toBe(404);
    const inUs = humans().filter((e) => e.linkId === link.id && e.country === 'US');
    const byCountry = await get(`/api/v1/links/${link.id}/analytics?from=${from}&to=${to}&interval=day&top=100&country=us`);
    expectGroups(byCountry, inUs);
    await expectVisitorsAsScansTable(byCountry, inUs, 'day');
  });
});

describe('export', () => {
  it('streams the raw scans as CSV and JSON with the same rows', async () => {
    const csvRes = await api.get(`/api/v1/analytics/export?format=csv&from=${from}&to=${to}&includeBots=true`);
    expect(csvRes.status).toBe(200);
    expect(csvRes.headers.get('content-type')).toContain('text/csv');
    const lines = (csvRes.body as string).trim().split('\n');
    expect(lines[0]).toBe('"scanId","timestamp","linkId","shortId","campaignId","destination","country","region","city","device","os","browser","referrer","referrerHost","utmSource","utmMedium","utmCampaign","utmTerm","utmContent","isBot","visitorId","clickId","userAgent","variant","trigger"');
    expect(lines).toHaveLength(events.length + 1);
    const jsonRes = await api.get(`/api/v1/analytics/export?format=json&from=${from}&to=${to}&includeBots=false`);
    expect(jsonRes.headers.get('content-type')).toContain('application/json');
    const rows = jsonRes.body as any[];
    expect(rows).toHaveLength(humans().length);
    const byId = new Map(events.map((e) => [e.scanId, e]));
    for (const row of rows.slice(0, 50)) {
      const e = byId.get(row.scanId)!;
      expect(row).toMatchObject({ linkId: e.linkId, shortId: e.shortId, country: e.country ?? '', device: e.device, isBot: 0 });
      expect(row.timestamp).toBe(new Date(Math.floor(e.timestamp / 1000) * 1000).toISOString().replace('.000Z', 'Z'));
    }
    const times = rows.map((r) => r.timestamp);
    expect(times).toEqual([...times].sort());
    const limited = await api.get(`/api/v1/analytics/export?format=json&from=${from}&to=${to}&limit=7&linkId=${links[1]!.id}`);
    expect(limited.body).toHaveLength(7);
    expect(limited.body.every((r: any) => r.linkId === links[1]!.id)).toBe(true);
    expect((await api.get(`/api/v1/analytics/export?limit=50001`)).status).toBe(400);
    const empty = await api.get('/api/v1/analytics/export?format=json&from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z');
    expect(empty.body).toEqual([]);
  });
});
