// Conversions through the real stack: click IDs from real redirects, POST
// /api/v1/track, the conversions topic, the conversion sink into ClickHouse,
// and the funnel read back over REST.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostWorkers } from '../../../src/platform/actors/host.ts';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import { conversionSinkKind } from '../../../src/links/conversions/conversion-sink.ts';
import type { ConversionEvent } from '../../../src/links/conversions/conversion-event.ts';
import { Conversions } from '../../../src/links/conversions/conversions.ts';
import { ClickIds } from '../../../src/links/scans/click-id.ts';
import { call, client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';
import { scan, scanSink } from '../../support/links/scans.ts';
import { readTopic } from '../../support/topic-reader.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

let ingress: TestIngress;
let api: ReturnType<typeof client>;
let other: ReturnType<typeof client>;
let workspaceId: string;
let stopWorkers: () => Promise<void>;
const started = Date.now();

// Its own databases: see vitest.config.ts (why this file may run side by side).
useOwnDatabases();

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  const ws = await workspaceWithKey(ingress.url);
  workspaceId = ws.workspaceId;
  api = client(ingress.url, ws.key);
  other = client(ingress.url, (await workspaceWithKey(ingress.url)).key);
  const runtimes = await hostWorkers(ingress.platform, [
    scanSink(ingress.platform),
    conversionSinkKind(ingress.platform.clickhouse, ingress.platform.pg),
  ]);
  stopWorkers = async () => { for (const r of runtimes) await r.stop(); };
}, 60_000);

afterAll(async () => {
  await stopWorkers?.();
  await ingress?.close();
});

async function linkWithClickIds(api: ReturnType<typeof client>, scans: number, extra: Record<string, unknown> = {}) {
  const link = await api.post('/api/v1/links', { destination: 'https://shop.example.com/item', ...extra });
  expect(link.status).toBe(201);
  await eventually(async () => ingress.app.redirects.cache.get(link.body.shortId) !== undefined, 5000, 20);
  const clickIds: string[] = [];
  for (let i = 0; i < scans; i++) {
    const res = await scan(ingress.url, link.body.shortId);
    expect(res.status).toBe(302);
    clickIds.push(res.clickId!);
  }
  return { id: link.body.id as string, clickIds };
}

const pgCount = async (ws: string) =>
  Number((await ingress.platform.pg.query<{ n: string }>('SELECT count(*) AS n FROM conversions WHERE workspace_id = $1', [ws])).rows[0]!.n);

describe('POST /api/v1/track and the funnel', () => {
  let campaignId: string;
  let shop: { id: string; clickIds: string[] };
  let blog: { id: string; clickIds: string[] };

  beforeAll(async () => {
    campaignId = (await api.post('/api/v1/campaigns', { name: 'Shop' })).body.id;
    shop = await linkWithClickIds(api, 4, { campaignId });
    blog = await linkWithClickIds(api, 1);
  }, 60_000);

  it('records tracked clicks once per scan and conversions with revenue, idempotent by externalId', async () => {
    const [a, b, c] = shop.clickIds as [string, string, string];
    for (const cid of [a, b, c]) {
      const res = await api.post('/api/v1/track', { clickId: cid, type: 'click' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({ object: 'conversion', type: 'click', event: 'click', linkId: shop.id, campaignId, amount: null, duplicate: false });
    }
    const again = await api.post('/api/v1/track', { clickId: a, type: 'click' });
    expect(again.status).toBe(200);
    expect(again.body.duplicate).toBe(true);

    const order = await api.post('/api/v1/track', { clickId: a, event: 'purchase', amount: 10.5, currency: 'eur', externalId: 'order-1', metadata: { sku: 'A1', qty: 2, gift: true } });
    expect(order.status).toBe(201);
    expect(order.body).toMatchObject({ type: 'conversion', event: 'purchase', amount: 10.5, currency: 'EUR', externalId: 'order-1', metadata: { sku: 'A1', qty: '2', gift: 'true' }, duplicate: false });
    const repeat = await api.post('/api/v1/track', { clickId: a, event: 'purchase', amount: 99, currency: 'EUR', externalId: 'order-1' });
    expect(repeat.status).toBe(200);
    expect(repeat.body).toMatchObject({ id: order.body.id, amount: 10.5, duplicate: true });

    expect((await api.post('/api/v1/track', { clickId: b, event: 'purchase', amount: 5.25, currency: 'EUR', externalId: 'order-2' })).status).toBe(201);
    expect((await api.post('/api/v1/track', { clickId: c, event: 'purchase', amount: 7, currency: 'USD' })).status).toBe(201);
    expect((await api.post('/api/v1/track', { clickId: a, event: 'signup' })).status).toBe(201);
    expect(await pgCount(workspaceId)).toBe(7);
  });

  it('refuses forged, malformed and other-workspace click IDs and bad revenue, recording nothing', async () => {
    const real = shop.clickIds[3]!;
    const forged = real.slice(0, 40) + (real[40] === 'A' ? 'B' : 'A') + real.slice(41);
    const foreign = (await linkWithClickIds(other, 1)).clickIds[0]!;
    const cases: [unknown, number, string][] = [
      [{ clickId: forged }, 404, 'click_id_unknown'],
      [{ clickId: 'abc' }, 400, 'click_id_malformed'],
      [{ clickId: foreign }, 403, 'click_id_other_workspace'],
      [{ clickId: real, amount: 3, currency: 'XYZ' }, 400, 'unknown_currency'],
      [{ clickId: real, amount: 3 }, 400, 'currency_required'],
      [{ clickId: real, currency: 'EUR' }, 400, 'amount_required'],
      [{ clickId: real, type: 'click', amount: 1, currency: 'EUR' }, 400, 'amount_not_allowed'],
      [{ clickId: real, amount: 1.0000001, currency: 'EUR' }, 400, 'amount_too_precise'],
      [{ clickId: real, amount: -1, currency: 'EUR' }, 400, 'validation_failed'],
      [{ clickId: real, metadata: { note: 'x'.repeat(501) } }, 400, 'validation_failed'],
      [{ clickId: real, metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'y'.repeat(300)])) }, 400, 'metadata_too_large'],
      [{ clickId: real, type: 'refund' }, 400, 'validation_failed'],
      [{ clickId: real, event: 'a\u0000' }, 400, 'validation_failed'],
      [{ clickId: real, externalId: 'x\u0000' }, 400, 'validation_failed'],
      [{ clickId: real, amount: 1e10, currency: 'EUR' }, 400, 'validation_failed'],
      [{ clickId: real, metadata: { ['k'.repeat(65)]: 'x' } }, 400, 'invalid_metadata_key'],
      [{ clickId: real, metadata: { '': 'x' } }, 400, 'invalid_metadata_key'],
      [{ clickId: real, surprise: 1 }, 400, 'unknown_field'],
    ];
    for (const [body, status, code] of cases) {
      const res = await api.post('/api/v1/track', body);
      expect([res.status, res.body.error?.code], JSON.stringify(body).slice(0, 80)).toEqual([status, code]);
    }
    expect(await pgCount(workspaceId)).toBe(7);
  });

  it('sums the funnel per workspace, link and campaign, with revenue by currency', async () => {
    const from = new Date(started - 60_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const funnel = async (query: string) => {
      const res = await api.get(`/api/v1/analytics/funnel?from=${from}&to=${to}${query}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body;
    };
    // Wait for the pipeline: 5 scans and 7 conversion rows in ClickHouse.
    await eventually(async () => {
      const f = await funnel('');
      return f.scans === 5 && f.trackedClicks === 3 && f.conversions === 4;
    }, 30_000);
    expect(await funnel('')).toEqual({
      object: 'funnel', from, to, linkId: null, campaignId: null, domain: null,
      scans: 5, trackedClicks: 3, conversions: 4, convertedScans: 3, clickRate: 0.6, conversionRate: 0.6,
      revenue: [{ currency: 'EUR', amount: 15.75, amountExact: '15.75', conversions: 2 }, { currency: 'USD', amount: 7, amountExact: '7', conversions: 1 }],
      variants: [],
    });
    expect(await funnel(`&campaignId=${campaignId}`)).toMatchObject({ scans: 4, trackedClicks: 3, conversions: 4, campaignId });
    expect(await funnel(`&campaignId=${campaignId.toUpperCase()}`)).toMatchObject({ scans: 4, trackedClicks: 3, conversions: 4, campaignId });
    expect(await funnel(`&linkId=${blog.id}`)).toMatchObject({ scans: 1, trackedClicks: 0, conversions: 0, conversionRate: 0, revenue: [] });
    // A link and a campaign that both exist but do not meet select nothing: zeros, not 404.
    expect(await funnel(`&linkId=${blog.id}&campaignId=${campaignId}`)).toMatchObject({ scans: 0, conversions: 0, linkId: blog.id, campaignId });
    // Each conversion is in ClickHouse once, though the repeats were sent.
    const rows = await ingress.platform.clickhouse.rows<{ n: string; ids: string }>(sql`SELECT count() AS n, uniqExact(conversion_id) AS ids FROM conversions WHERE workspace_id = ${workspaceId}`);
    expect(rows[0]).toEqual({ n: '7', ids: '7' });
  }, 60_000);

  it('publishes conversions to the conversions topic in Avro, readable with the registry', async () => {
    const config = ingress.platform.config;
    const messages = await readTopic<ConversionEvent>(config, 'conversions', (m) => m.filter((x) => x.key === workspaceId).length >= 7);
    const mine = messages.filter((m) => m.key === workspaceId).map((m) => m.value);
    expect(mine).toHaveLength(7);
    expect(mine.find((e) => e.externalId === 'order-1')).toMatchObject({ type: 'conversion', event: 'purchase', amountMicros: 10_500_000, currency: 'EUR', linkId: shop.id, campaignId });
  });

  it('answers 404 for a funnel scope that is not the workspace\'s', async () => {
    const foreignCampaign = (await other.post('/api/v1/campaigns', { name: 'Theirs' })).body.id;
    expect((await api.get(`/api/v1/analytics/funnel?campaignId=${foreignCampaign}`)).body.error.code).toBe('not_found');
    expect((await api.get('/api/v1/analytics/funnel?linkId=00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const empty = (await api.post('/api/v1/campaigns', { name: 'Empty' })).body.id;
    expect(await (await api.get(`/api/v1/analytics/funnel?campaignId=${empty}`)).body).toMatchObject({ scans: 0, conversions: 0, revenue: [] });
  });

  it('rejects funnel ranges that are inverted or too long', async () => {
    expect((await api.get('/api/v1/analytics/funnel?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z')).body.error.code).toBe('invalid_range');
    expect((await api.get('/api/v1/analytics/funnel?from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z')).body.error.code).toBe('invalid_range');
    expect((await api.get('/api/v1/analytics/funnel?linkId=nope')).body.error.code).toBe('validation_failed');
  });

  it('stores a conversion published twice (a relay after a crash) once in ClickHouse', async () => {
    // As if every conversion had been left unpublished: the relay publishes all seven again.
    await ingress.platform.pg.query('UPDATE conversions SET published_at = NULL WHERE workspace_id = $1', [workspaceId]);
    await new Conversions(ingress.platform.pg, ingress.platform.publisher, ingress.platform.log, new ClickIds(ingress.platform.config.CLICK_ID_SECRET)).outbox.relayOnce(0);
    // One more after them on the same partition (keyed by workspace): once it is stored, the repeats were handled.
    expect((await api.post('/api/v1/track', { clickId: blog.clickIds[0], event: 'signup' })).status).toBe(201);
    const stored = async () => (await ingress.platform.clickhouse.rows<{ n: string; ids: string }>(sql`SELECT count() AS n, uniqExact(conversion_id) AS ids FROM conversions WHERE workspace_id = ${workspaceId}`))[0]!;
    await eventually(async () => (await stored()).ids === '8', 30_000);
    expect(await stored()).toEqual({ n: '8', ids: '8' });
  });
});

describe('POST /api/v1/track with an Idempotency-Key header', () => {
  it('records a retried conversion once, the header winning over externalId', async () => {
    const ws = await workspaceWithKey(ingress.url);
    const mine = client(ingress.url, ws.key);
    const [clickId] = (await linkWithClickIds(mine, 1)).clickIds as [string];
    const track = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      call(ingress.url, 'POST', '/api/v1/track', { key: ws.key, body, headers });
    const purchase = { clickId, event: 'purchase', amount: 12.5, currency: 'EUR' };

    // A client retrying a request whose answer it never saw: one conversion.
    const first = await track(purchase, { 'idempotency-key': 'order-7781-try' });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({ externalId: 'order-7781-try', duplicate: false });
    const retry = await track(purchase, { 'idempotency-key': 'order-7781-try' });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ id: first.body.id, externalId: 'order-7781-try', duplicate: true });
    expect(await pgCount(ws.workspaceId)).toBe(1);

    // The header wins over the body's externalId.
    const both = await track({ ...purchase, externalId: 'body-key' }, { 'idempotency-key': 'order-7781-try' });
    expect(both.body).toMatchObject({ id: first.body.id, duplicate: true });
    // The IETF draft's quoted form is the same key.
    expect((await track(purchase, { 'idempotency-key': '"order-7781-try"' })).body).toMatchObject({ id: first.body.id, duplicate: true });
    // Without either, every request is a new conversion (as before).
    expect((await track(purchase)).status).toBe(201);
    expect((await track(purchase)).status).toBe(201);
    expect(await pgCount(ws.workspaceId)).toBe(3);

    // The header follows externalId's rules: 1 to 128 characters.
    for (const bad of ['x'.repeat(129), '']) {
      const res = await track(purchase, { 'idempotency-key': bad });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
    expect(await pgCount(ws.workspaceId)).toBe(3);
  });
});
