// The funnel's steps agree on bots: without includeBots, the tracked clicks and conversions
// of bot scans are left out as the bot scans are, so no rate passes 1 for that reason; with
// it, all are counted. Revenue sums past 2^53 micro-units are answered exactly as decimal
// strings beside the numbers. Scans come from real redirects, conversions from POST /track.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostWorkers } from '../../../src/platform/actors/host.ts';
import { conversionSinkKind } from '../../../src/links/conversions/conversion-sink.ts';
import { eventually } from '../../support/env.ts';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { scan, scanSink } from '../../support/links/scans.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

const BOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
let ingress: TestIngress;
let api: ReturnType<typeof client>;
let stopWorkers: () => Promise<void>;
const from = new Date(Date.now() - 3_600_000).toISOString();
const to = new Date(Date.now() + 3_600_000).toISOString();

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  api = client(ingress.url, (await workspaceWithKey(ingress.url)).key);
  const runtimes = await hostWorkers(ingress.platform, [scanSink(ingress.platform), conversionSinkKind(ingress.platform.clickhouse, ingress.platform.pg)]);
  stopWorkers = async () => { for (const r of runtimes) await r.stop(); };
}, 60_000);

afterAll(async () => {
  await stopWorkers?.();
  await ingress?.close();
});

const funnel = async (query = '') => {
  const res = await api.get(`/api/v1/analytics/funnel?from=${from}&to=${to}${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

describe('funnel', () => {
  it('leaves out the clicks and conversions of bot scans with the bot scans, and sums revenue exactly past 2^53 micros', async () => {
    const link = (await api.post('/api/v1/links', { destination: 'https://shop.example.com/item' })).body;
    await eventually(async () => ingress.app.redirects.cache.get(link.shortId) !== undefined, 5000, 20);
    const [human1, human2, bot1, bot2] = [
      await scan(ingress.url, link.shortId), await scan(ingress.url, link.shortId),
      await scan(ingress.url, link.shortId, { 'user-agent': BOT_UA }), await scan(ingress.url, link.shortId, { 'user-agent': BOT_UA }),
    ].map((s) => s.clickId!) as [string, string, string, string];
    void human2;
    const track = async (body: Record<string, unknown>) => expect((await api.post('/api/v1/track', body)).status).toBe(201);
    // Tracked clicks: one human scan, both bot scans (a preview fetcher that ran the landing page's script).
    for (const clickId of [human1, bot1, bot2]) await track({ clickId, type: 'click' });
    // 10 × 999,999,999.999999 + 0.000001 EUR from the human scan: 9,999,999,999,999,991 micros, odd and past 2^53.
    for (let i = 0; i < 10; i++) await track({ clickId: human1, amount: 999_999_999.999999, currency: 'EUR', externalId: `big-${i}` });
    await track({ clickId: human1, amount: 0.000001, currency: 'EUR', externalId: 'tiny' });
    await track({ clickId: bot1, amount: 10, currency: 'EUR', externalId: 'bot-order' });
    await track({ clickId: bot2, amount: 2.5, currency: 'USD', externalId: 'bot-order-2' });

    await eventually(async () => {
      const all = await funnel('&includeBots=true');
      return all.scans === 4 && all.trackedClicks === 3 && all.conversions === 13;
    }, 30_000);

    expect(await funnel()).toEqual({
      object: 'funnel', from, to, linkId: null, campaignId: null, domain: null,
      scans: 2, trackedClicks: 1, conversions: 11, convertedScans: 1, clickRate: 0.5, conversionRate: 0.5,
      revenue: [{ currency: 'EUR', amount: 9_999_999_999.999991, amountExact: '9999999999.999991', conversions: 11 }],
      variants: [],
    });
    expect(await funnel(`&linkId=${link.id}&includeBots=false`)).toMatchObject({ scans: 2, trackedClicks: 1, conversions: 11, convertedScans: 1 });
    expect(await funnel('&includeBots=true')).toEqual({
      object: 'funnel', from, to, linkId: null, campaignId: null, domain: null,
      scans: 4, trackedClicks: 3, conversions: 13, convertedScans: 3, clickRate: 0.75, conversionRate: 0.75,
      revenue: [
        { currency: 'EUR', amount: 10_000_000_009.999991, amountExact: '10000000009.999991', conversions: 12 },
        { currency: 'USD', amount: 2.5, amountExact: '2.5', conversions: 1 },
      ],
      variants: [],
    });
  }, 90_000);
});
