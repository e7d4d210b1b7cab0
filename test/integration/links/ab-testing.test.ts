// A/B destinations (issue 33, item 3), through real HTTP, Kafka and ClickHouse: a link's
// testVariants split visitors by their shares, each visitor sticking to one; the scan
// records the variant (the `scans` schema evolved BACKWARD), the scan sink stores it,
// and the link and workspace analytics, the funnel and the MCP tools split by it;
// through create, update, get, bulk and MCP; bad variants are 400s.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { client, freshIp, type TestIngress } from '../../support/ingress.ts';
import { ingressWithWorkspace, type ApiClient } from '../../support/links/ingress-with-workspace.ts';
import { hostSinks, linkScansStored, scan } from '../../support/links/scans.ts';
import { eventually } from '../../support/env.ts';
import { readTopic } from '../../support/topic-reader.ts';

const A = 'https://example.com/a';
const B = 'https://example.com/b';

let ingress: TestIngress, api: ApiClient, key: string;
let stopWorkers: () => Promise<void>;
beforeAll(async () => {
  ({ ingress, api, key } = await ingressWithWorkspace());
  stopWorkers = await hostSinks(ingress.platform, { conversions: true });
}, 60_000);
afterAll(async () => {
  await stopWorkers?.();
  await ingress?.close();
});

async function createLink(body: Record<string, unknown>) {
  const res = await api.post('/api/v1/links', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const variantOf = (location: string | null) => location?.split('?')[0] ?? null;

describe('A/B destinations', () => {
  it('split visitors by their shares, each visitor sticking to one variant', async () => {
    const link = await createLink({ destination: 'https://example.com/', testVariants: [{ url: A, percent: 70 }, { url: 'https://Example.com/b', percent: 30 }] });
    expect(link.testVariants).toEqual([{ url: A, percent: 70 }, { url: B, percent: 30 }]);
    const seen = { [A]: 0, [B]: 0 } as Record<string, number>;
    for (let i = 0; i < 200; i++) {
      const res = await scan(ingress.url, link.shortId, { 'x-forwarded-for': freshIp() });
      expect(res.location).toMatch(/^https:\/\/example\.com\/[ab]\?svc_cid=/);
      seen[variantOf(res.location)!]! += 1;
    }
    // 70/30 of 200: the A share is 140 ± 4.5 standard deviations.
    expect(seen[A]).toBeGreaterThan(110);
    expect(seen[A]).toBeLessThan(170);
    // The same visitor (IP and User-Agent) keeps their variant.
    for (let v = 0; v < 5; v++) {
      const ip = freshIp();
      const first = variantOf((await scan(ingress.url, link.shortId, { 'x-forwarded-for': ip })).location);
      for (let again = 0; again < 3; again++) expect(variantOf((await scan(ingress.url, `${link.shortId}?again=${again}`, { 'x-forwarded-for': ip })).location)).toBe(first);
    }
  });

  it('record the variant in the scan, in ClickHouse, and split the link and workspace analytics and the funnel by it', async () => {
    const link = await createLink({ destination: 'https://example.com/', testVariants: [{ url: A, percent: 50 }, { url: B, percent: 50 }] });
    const plain = await createLink({ destination: 'https://example.com/plain' });
    const clickIds: Record<string, string[]> = { [A]: [], [B]: [] };
    for (let i = 0; i < 30; i++) {
      const res = await scan(ingress.url, link.shortId, { 'x-forwarded-for': freshIp() });
      clickIds[variantOf(res.location)!]!.push(res.clickId!);
    }
    await scan(ingress.url, plain.shortId);
    expect(clickIds[A]!.length).toBeGreaterThan(0);
    expect(clickIds[B]!.length).toBeGreaterThan(0);

    const messages = await readTopic<ScanEvent>(ingress.platform.config, 'scans', (m) => m.filter((x) => x.value.linkId === link.id).length >= 30);
    const events = messages.filter((m) => m.value.linkId === link.id).map((m) => m.value);
    expect(events.every((e) => (e.variant === A || e.variant === B) && e.destination === e.variant)).toBe(true);
    expect(events.filter((e) => e.variant === A).length).toBe(clickIds[A]!.length);

    await eventually(() => linkScansStored(ingress.platform.clickhouse, link.id, 30), 60_000);
    const stored = await ingress.platform.clickhouse.rows<{ variant: string; n: string }>(sql`SELECT variant, count() AS n FROM scans WHERE link_id IN (${link.id}, ${plain.id}) GROUP BY variant ORDER BY variant`);
    expect(stored.map((r) => [r.variant, Number(r.n)])).toEqual([['', 1], [A, clickIds[A]!.length], [B, clickIds[B]!.length]]);
    const exported = await fetch(`${ingress.url}/api/v1/analytics/export?format=json&linkId=${link.id}`, { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': freshIp() } });
    const rows = (await exported.json()) as { variant: string; clickId: string }[];
    expect(rows.length).toBe(30);
    expect(rows.every((r) => r.variant === (clickIds[A]!.includes(r.clickId) ? A : B))).toBe(true);

    // Three conversions of A's scans (two priced purchases of one scan), one click of B's.
    expect((await api.post('/api/v1/track', { clickId: clickIds[A]![0], event: 'purchase', amount: 10, currency: 'EUR' })).status).toBe(201);
    expect((await api.post('/api/v1/track', { clickId: clickIds[A]![0], event: 'purchase', amount: 5.5, currency: 'EUR' })).status).toBe(201);
    expect((await api.post('/api/v1/track', { clickId: clickIds[A]![1] ?? clickIds[A]![0], event: 'signup' })).status).toBe(201);
    expect((await api.post('/api/v1/track', { clickId: clickIds[B]![0], type: 'click' })).status).toBe(201);

    const expected = [
      { variant: A, scans: clickIds[A]!.length },
      { variant: B, scans: clickIds[B]!.length },
    ].sort((x, y) => y.scans - x.scans || (x.variant < y.variant ? -1 : 1));
    const byLink = await eventually(async () => {
      const res = await api.get(`/api/v1/links/${link.id}/analytics`);
      return res.body.variants?.length === 2 ? res.body : undefined;
    }, 30_000);
    expect(byLink.variants.map((v: { variant: string; scans: number }) => ({ variant: v.variant, scans: v.scans }))).toEqual(expected);
    expect(byLink.variants.reduce((n: number, v: { scans: number }) => n + v.scans, 0)).toBe(byLink.totalScans);
    expect(byLink.variants.every((v: { uniqueVisitors: number; scans: number }) => v.uniqueVisitors > 0 && v.uniqueVisitors <= v.scans + 1)).toBe(true);
    const workspace = await api.get(`/api/v1/analytics?linkId=${link.id}`);
    expect(workspace.body.variants).toEqual(byLink.variants);
    // Scans of other links are not in it; a country filter applies (no scan comes from a known country here).
    expect((await api.get(`/api/v1/links/${plain.id}/analytics`)).body.variants).toEqual([]);
    expect((await api.get(`/api/v1/links/${link.id}/analytics?country=DE`)).body.variants).toEqual([]);

    const funnel = await eventually(async () => {
      const res = await api.get(`/api/v1/analytics/funnel?linkId=${link.id}`);
      const a = res.body.variants?.find((v: { variant: string }) => v.variant === A);
      const b = res.body.variants?.find((v: { variant: string }) => v.variant === B);
      return a?.conversions === 3 && b?.trackedClicks === 1 ? res.body : undefined;
    }, 30_000);
    const a = funnel.variants.find((v: { variant: string }) => v.variant === A);
    expect(a).toMatchObject({ scans: clickIds[A]!.length, conversions: 3, trackedClicks: 0 });
    expect(a.convertedScans).toBe(clickIds[A]!.length > 1 ? 2 : 1);
    expect(a.conversionRate).toBeCloseTo(a.convertedScans / a.scans, 3);
    expect(funnel.variants.find((v: { variant: string }) => v.variant === B)).toMatchObject({ scans: clickIds[B]!.length, trackedClicks: 1, conversions: 0, revenue: [] });
    // Revenue per variant: both of A's purchases, in their currency; the signup carried none.
    expect(a.revenue).toEqual([{ currency: 'EUR', amount: 15.5, amountExact: '15.5', conversions: 2 }]);
    expect(funnel.revenue).toEqual(a.revenue);

    // The MCP analytics tools give the same split.
    const mcp = new Client({ name: 'test', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${ingress.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': freshIp() } } }));
    try {
      const viaMcp = await mcp.callTool({ name: 'get_funnel', arguments: { linkId: link.id, daysBack: 1 } });
      expect(viaMcp.isError, JSON.stringify(viaMcp.content)).toBeFalsy();
      expect((viaMcp.structuredContent as { variants: unknown }).variants).toEqual(funnel.variants);
      const analytics = await mcp.callTool({ name: 'get_analytics', arguments: { linkId: link.id, daysBack: 1 } });
      expect(analytics.isError, JSON.stringify(analytics.content)).toBeFalsy();
      expect((analytics.structuredContent as { variants: unknown }).variants).toEqual(funnel.variants);
    } finally {
      await mcp.close();
    }
  });

  it('are changed and cleared by PATCH and bulk, shown by GET, and offered by the MCP create_link tool', async () => {
    const link = await createLink({ destination: 'https://example.com/' });
    expect(link.testVariants).toBeNull();
    const set = await api.patch(`/api/v1/links/${link.id}`, { testVariants: [{ url: A, percent: 10 }, { url: B, percent: 90 }] });
    expect(set.status).toBe(200);
    expect(set.body.testVariants).toEqual([{ url: A, percent: 10 }, { url: B, percent: 90 }]);
    expect((await api.get(`/api/v1/links/${link.id}`)).body.testVariants).toEqual(set.body.testVariants);
    await eventually(async () => (ingress.app.redirects.cache.get(link.shortId)?.testVariants.length ?? 0) === 2, 5000, 20);
    expect((await scan(ingress.url, link.shortId)).location).toMatch(/^https:\/\/example\.com\/[ab]\?/);
    expect((await api.patch(`/api/v1/links/${link.id}`, { testVariants: null })).body.testVariants).toBeNull();
    await eventually(async () => ingress.app.redirects.cache.get(link.shortId)?.testVariants.length === 0, 5000, 20);
    expect((await scan(ingress.url, link.shortId)).location).toMatch(/^https:\/\/example\.com\/\?/);

    const four = [25, 25, 25, 25].map((percent, i) => ({ url: `https://example.com/v${i}`, percent }));
    const bulk = await api.post('/api/v1/links/bulk', {
      operations: [
        { action: 'create', link: { destination: 'https://example.com/', testVariants: four } },
        { action: 'update', id: link.id, changes: { testVariants: [{ url: A, percent: 60 }, { url: B, percent: 60 }] } },
        { action: 'update', id: link.id, changes: { testVariants: [{ url: A, percent: 60 }, { url: B, percent: 40 }] } },
      ],
    });
    expect(bulk.body.results.map((r: { status: number }) => r.status)).toEqual([201, 400, 200]);
    expect(bulk.body.results[0].link.testVariants).toEqual(four);
    expect(bulk.body.results[1].error.code).toBe('invalid_test_variants');

    const mcp = new Client({ name: 'test', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${ingress.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': freshIp() } } }));
    try {
      const result = await mcp.callTool({ name: 'create_link', arguments: { destination: 'https://example.com/', testVariants: [{ url: A, percent: 50 }, { url: B, percent: 50 }] } });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect((result.structuredContent as { link: { testVariants: unknown } }).link.testVariants).toEqual([{ url: A, percent: 50 }, { url: B, percent: 50 }]);
      const bad = await mcp.callTool({ name: 'create_link', arguments: { destination: 'https://example.com/', testVariants: [{ url: A, percent: 50 }, { url: B, percent: 40 }] } });
      expect(bad.isError).toBe(true);
      expect(JSON.parse((bad.content as { text: string }[])[0]!.text).error.code).toBe('invalid_test_variants');
    } finally {
      await mcp.close();
    }
  });

  it('refuse variants that break the rules with 400 and a stable code, changing nothing', async () => {
    const own = new URL((await createLink({ destination: 'https://example.com/' })).shortUrl).origin;
    const v = (url: string, percent: number) => ({ url, percent });
    const cases: [unknown, string, string?][] = [
      [[v(A, 100)], 'validation_failed'],
      [[v(A, 20), v(B, 20), v(A, 20), v(B, 20), v(A, 20)], 'validation_failed'],
      [[v(A, 5), v(B, 95)], 'validation_failed'],
      [[v(A, 50.5), v(B, 49.5)], 'validation_failed'],
      [[v(A, 50), v(B, 40)], 'invalid_test_variants', '/testVariants'],
      [[v(A, 40), v(B, 40), v(A, 40)], 'invalid_test_variants', '/testVariants'],
      [[v(A, 50), v('ftp://example.com/', 50)], 'invalid_url', '/testVariants/1/url'],
      [[v(`${own}/loop`, 50), v(B, 50)], 'invalid_url', '/testVariants/0/url'],
      [[{ url: A, percent: 50, weight: 1 }, v(B, 50)], 'unknown_field'],
      [[{ url: A }, v(B, 50)], 'validation_failed'],
      [{ url: A, percent: 100 }, 'validation_failed'],
    ];
    for (const [testVariants, code, path] of cases) {
      const res = await api.post('/api/v1/links', { destination: 'https://example.com/', testVariants });
      expect(res.status, JSON.stringify(testVariants)).toBe(400);
      expect(res.body.error.code, JSON.stringify(testVariants)).toBe(code);
      if (path) expect(res.body.error.details[0].path).toBe(path);
    }
  });
});

describe('the scans value schema', () => {
  it('is a BACKWARD-compatible evolution of the schema before variants (the registry accepts it)', async () => {
    const now = JSON.parse(readFileSync(new URL('../../../schemas/scan.avsc', import.meta.url), 'utf8'));
    const at = now.fields.findIndex((f: { name: string }) => f.name === 'variant');
    expect(now.fields[at]).toMatchObject({ name: 'variant', type: ['null', 'string'], default: null });
    // The schema as it was before variants: the fields before it (those added after it came later).
    const before = { ...now, fields: now.fields.slice(0, at) };
    const registry = ingress.platform.config.SCHEMA_REGISTRY_URL;
    const subject = `${ingress.platform.config.TOPIC_PREFIX}.scan-evolution-value`;
    const post = async (path: string, body: unknown, method = 'POST') => (await fetch(`${registry}${path}`, { method, headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' }, body: JSON.stringify(body) })).json();
    await post(`/config/${subject}`, { compatibility: 'BACKWARD' }, 'PUT');
    expect(await post(`/subjects/${subject}/versions`, { schema: JSON.stringify(before) })).toMatchObject({ id: expect.any(Number) });
    expect(await post(`/compatibility/subjects/${subject}/versions/latest`, { schema: JSON.stringify(now) })).toMatchObject({ is_compatible: true });
    expect(await post(`/subjects/${subject}/versions`, { schema: JSON.stringify(now) })).toMatchObject({ id: expect.any(Number) });
  });
});
