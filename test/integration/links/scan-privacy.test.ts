// Erasure and retention of scans (issue 43, item 6) against the real stack: scans made through real
// redirects, stored by the real sinks; erasures asked for over HTTP (202) and applied by the privacy
// runner, triggered here rather than waited for; analytics, rollups (every one, against the scans
// table), the export, the funnel and conversions checked after; two workspaces side by side (the
// same visitor in both), two runners at once, and the retention pass.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import { insertSettings } from '../../../src/platform/clickhouse/replication.ts';
import { wireLinks } from '../../../src/links/wiring.ts';
import type { ScanPrivacy } from '../../../src/links/privacy/scan-privacy.ts';
import { client, type TestIngress } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
import { replicasInStep } from '../../support/clickhouse-servers.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { createdLink, ingressWithWorkspace, type ApiClient } from '../../support/links/ingress-with-workspace.ts';
import { hostSinks, linkScansStored, scan, scansStored } from '../../support/links/scans.ts';

let ingress: TestIngress;
let a: ApiClient;
let aId: string;
let b: ApiClient;
let bId: string;
let stopSinks: () => Promise<void>;
let privacy: () => ScanPrivacy;

beforeAll(async () => {
  let key: string;
  ({ ingress, api: a, key, workspaceId: aId } = await ingressWithWorkspace());
  void key;
  const other = await workspaceWithKey(ingress.url);
  ({ workspaceId: bId } = other);
  b = client(ingress.url, other.key);
  stopSinks = await hostSinks(ingress.platform, { conversions: true });
  // A runner as the scan sink's workers make it (their locks, this file's topics); a new one each call, as separate workers would be.
  privacy = () => wireLinks(ingress.platform, ingress.platform.config).scanPrivacy;
}, 180_000);

afterAll(async () => {
  await stopSinks?.();
  await ingress?.close();
});

const VISITOR = { 'x-forwarded-for': '2001:db8:43:6::1', 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1' };
const OTHER = { 'x-forwarded-for': '2001:db8:43:7::1' };
const DAY = 86_400_000;
const range = `from=${new Date(Date.now() - 60 * DAY).toISOString()}&to=${new Date(Date.now() + 3_600_000).toISOString()}`;

async function scanned(shortId: string, headers: Record<string, string>) {
  const res = await scan(ingress.url, shortId, headers);
  expect(res.status).toBe(302);
  return res.clickId!;
}

// On replicas a read may go to the one a quorum insert has not reached yet: each holds every part before the API reads.
const inStep = () => replicasInStep(ingress.platform.config);

const total = async (api: ApiClient) => (await api.get(`/api/v1/analytics?${range}`)).body.totalScans as number;

describe('scan erasure and retention', () => {
  it('erase a visitor\'s scans and a link\'s, in analytics, every rollup, the export, the funnel and conversions, leaving other workspaces alone', async () => {
    const one = await createdLink(a, { destination: 'https://example.com/one' });
    const two = await createdLink(a, { destination: 'https://example.com/two' });
    const theirs = await createdLink(b, { destination: 'https://example.com/theirs' });
    // The visitor: twice on one, once on two; another visitor once on each; the same visitor in workspace B.
    const visitorClick = await scanned(one.shortId, VISITOR);
    await scanned(one.shortId, VISITOR);
    await scanned(two.shortId, VISITOR);
    await scanned(one.shortId, OTHER);
    const otherClick = await scanned(two.shortId, OTHER);
    const bClick = await scanned(theirs.shortId, VISITOR);
    expect((await a.post('/api/v1/track', { clickId: visitorClick, event: 'purchase', amount: 5, currency: 'EUR' })).status).toBe(201);
    expect((await a.post('/api/v1/track', { clickId: otherClick, event: 'purchase', amount: 7, currency: 'EUR' })).status).toBe(201);
    const ch = ingress.platform.clickhouse;
    await eventually(() => scansStored(ch, aId, 5), 30_000);
    await eventually(() => scansStored(ch, bId, 1), 30_000);
    await eventually(async () => Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM conversions WHERE workspace_id = ${aId}`))[0]!.n) === 2, 30_000);

    // Bad input: a clear 4xx with a stable code, and no erasure recorded.
    const forged = visitorClick.slice(0, 40) + (visitorClick[40] === 'A' ? 'B' : 'A') + visitorClick.slice(41);
    for (const [body, status, code] of [
      [{ clickId: 'abc' }, 400, 'click_id_malformed'],
      [{}, 400, 'validation_failed'],
      [{ clickId: visitorClick, extra: 1 }, 400, 'unknown_field'],
      [{ clickId: forged }, 404, 'click_id_unknown'],
      [{ clickId: bClick }, 403, 'click_id_other_workspace'],
    ] as const) {
      const res = await a.post('/api/v1/privacy/erasures', body);
      expect([res.status, res.body.error?.code], JSON.stringify(body)).toEqual([status, code]);
    }
    expect((await a.delete(`/api/v1/links/${theirs.id}/scans`)).status).toBe(404);
    expect((await a.delete('/api/v1/links/nope/scans')).status).toBe(404);
    const pending = async () => Number((await ingress.platform.pg.query<{ n: number }>('SELECT count(*)::int AS n FROM scan_erasures WHERE workspace_id IN ($1, $2) AND done_at IS NULL', [aId, bId])).rows[0]!.n);
    expect(await pending()).toBe(0);

    // The visitor's scans: 202, applied by the runner.
    const erasure = await a.post('/api/v1/privacy/erasures', { clickId: visitorClick });
    expect(erasure.status).toBe(202);
    expect(erasure.body).toMatchObject({ object: 'scan_erasure', kind: 'visitor', status: 'pending' });
    expect(await privacy().runErasures()).toBe(1);
    await inStep();
    expect(await pending()).toBe(0);
    // Every rollup agrees with the scans table again (scansStored compares them all), and only the other visitor is left.
    expect(await scansStored(ch, aId, 2)).toBe(true);
    expect(await total(a)).toBe(2);
    expect((await a.get(`/api/v1/analytics?${range}`)).body.uniqueVisitors).toBe(1);
    const exported = (await a.get(`/api/v1/analytics/export?format=json&${range}`)).body as { clickId: string }[];
    expect(exported.map((r) => r.clickId).sort()).toEqual(exported.map((r) => r.clickId).filter((c) => c !== visitorClick).sort());
    expect(exported).toHaveLength(2);
    const funnel = (await a.get(`/api/v1/analytics/funnel?${range}`)).body;
    expect(funnel).toMatchObject({ scans: 2, conversions: 2 });
    // Their conversion stays (revenue) without its scan; the other visitor's keeps its own.
    const conversions = await ch.rows<{ scan_id: string; click_id: string; amount_micros: string }>(sql`SELECT scan_id, click_id, amount_micros FROM conversions WHERE workspace_id = ${aId} ORDER BY amount_micros`);
    expect(conversions.map((c) => [c.scan_id === '', c.click_id === '', Number(c.amount_micros)])).toEqual([[true, true, 5_000_000], [false, false, 7_000_000]]);
    // The same visitor in workspace B is untouched.
    expect(await scansStored(ch, bId, 1)).toBe(true);
    expect(await total(b)).toBe(1);

    // A link's scans; two runners at once apply it once.
    const linkErasure = await a.delete(`/api/v1/links/${one.id}/scans`);
    expect([linkErasure.status, linkErasure.body.kind]).toEqual([202, 'link']);
    const runs = await Promise.all([privacy().runErasures(), privacy().runErasures()]);
    await inStep();
    expect(runs.sort()).toEqual([0, 1]);
    expect(await linkScansStored(ch, one.id, 0)).toBe(true);
    expect(await scansStored(ch, aId, 1)).toBe(true);
    expect((await a.get(`/api/v1/links/${one.id}/analytics?${range}`)).body.totalScans).toBe(0);
    expect((await a.get(`/api/v1/links/${two.id}/analytics?${range}`)).body.totalScans).toBe(1);
    expect((await a.get(`/api/v1/links/${one.id}`)).status).toBe(200); // the link stays
    expect(await scansStored(ch, bId, 1)).toBe(true);
  });

  it('an erased scan\'s conversion and tracked click no longer count as a converted or clicked scan in the funnel (a visitor\'s erasure, and a link\'s)', async () => {
    const own = await workspaceWithKey(ingress.url);
    const c = client(ingress.url, own.key);
    const link = await createdLink(c, { destination: 'https://example.com/funnel' });
    const other = await createdLink(c, { destination: 'https://example.com/funnel-other' });
    const converted = await scanned(link.shortId, VISITOR);
    await scanned(link.shortId, OTHER); // never converts
    const otherClick = await scanned(other.shortId, OTHER);
    expect((await c.post('/api/v1/track', { clickId: converted, type: 'click' })).status).toBe(201);
    expect((await c.post('/api/v1/track', { clickId: converted, event: 'purchase', amount: 5, currency: 'EUR' })).status).toBe(201);
    expect((await c.post('/api/v1/track', { clickId: otherClick, event: 'purchase', amount: 3, currency: 'EUR' })).status).toBe(201);
    const ch = ingress.platform.clickhouse;
    await eventually(() => scansStored(ch, own.workspaceId, 3), 30_000);
    await eventually(async () => Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM conversions WHERE workspace_id = ${own.workspaceId}`))[0]!.n) === 3, 30_000);
    await inStep();
    const funnel = async (scope: string) => (await c.get(`/api/v1/analytics/funnel?${range}${scope}`)).body;
    expect(await funnel(`&linkId=${link.id}`)).toMatchObject({ scans: 2, trackedClicks: 1, conversions: 1, convertedScans: 1, conversionRate: 0.5 });

    expect((await c.post('/api/v1/privacy/erasures', { clickId: converted })).status).toBe(202);
    expect(await privacy().runErasures()).toBe(1);
    await inStep();
    // The conversion stays (revenue), but the only scan left never converted or clicked.
    expect(await funnel(`&linkId=${link.id}`)).toMatchObject({ scans: 1, trackedClicks: 0, conversions: 1, convertedScans: 0, clickRate: 0, conversionRate: 0 });
    expect(await funnel('')).toMatchObject({ scans: 2, trackedClicks: 0, conversions: 2, convertedScans: 1, conversionRate: 0.5 });

    // A link's erasure: its conversions no longer name the erased scans either.
    expect((await c.delete(`/api/v1/links/${other.id}/scans`)).status).toBe(202);
    expect(await privacy().runErasures()).toBe(1);
    await inStep();
    expect(await funnel('')).toMatchObject({ scans: 1, conversions: 2, convertedScans: 0, conversionRate: 0 });
    expect((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM conversions WHERE workspace_id = ${own.workspaceId} AND (scan_id != '' OR click_id != '')`))[0]!.n).toBe('0');
  });

  it('keeps scans scanRetentionDays: PATCH and GET /workspace, and a retention pass that drops only what is older, rollups included', async () => {
    expect((await a.get('/api/v1/workspace')).body).toMatchObject({ object: 'workspace', id: aId, scanRetentionDays: null });
    for (const body of [{ scanRetentionDays: 0 }, { scanRetentionDays: 3651 }, { scanRetentionDays: 'x' }, { scanRetentionDays: 1.5 }, {}, { scanRetentionDays: 30, extra: 1 }]) {
      const res = await a.patch('/api/v1/workspace', body);
      expect([res.status, res.body.error?.code], JSON.stringify(body)).toEqual([400, expect.stringMatching(/^(validation_failed|unknown_field)$/)]);
    }
    expect((await a.get('/api/v1/workspace')).body.scanRetentionDays).toBeNull();
    expect((await a.patch('/api/v1/workspace', { scanRetentionDays: 30 })).body).toMatchObject({ scanRetentionDays: 30 });
    expect((await b.get('/api/v1/workspace')).body.scanRetentionDays).toBeNull();

    // A scan 40 days old in each workspace (stored as the sink stores them: the views fill the rollups; on replicas with a quorum).
    const ch = ingress.platform.clickhouse;
    const old = new Date(Date.now() - 40 * DAY);
    const before = { a: Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM scans WHERE workspace_id = ${aId}`))[0]!.n), b: Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM scans WHERE workspace_id = ${bId}`))[0]!.n) };
    for (const ws of [aId, bId]) {
      await ch.exec(sql`INSERT INTO scans_input (scan_id, click_id, workspace_id, link_id, short_id, campaign_id, ts, destination, country, region, city, device, os, browser, referrer, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content, is_bot, user_agent, visitor_id)
        VALUES (${randomUUID()}, 'old', ${ws}, ${randomUUID()}, 'old', '', ${old}, 'https://example.com/old', 'DE', '', '', 'desktop', '', '', '', '', '', '', '', '', '', 0, '', 'old-visitor')`, { settings: await insertSettings(ch, 'scans') });
    }
    await eventually(() => scansStored(ch, aId, before.a + 1), 10_000);
    await inStep();
    expect(await total(a)).toBe(before.a + 1);

    expect(await privacy().runRetention(true)).toBe(true);
    await inStep();
    expect(await scansStored(ch, aId, before.a)).toBe(true);
    expect(await total(a)).toBe(before.a);
    // B keeps its scans forever.
    expect(await scansStored(ch, bId, before.b + 1)).toBe(true);
    // Not due again within the day; forced, it finds nothing more to drop.
    expect(await privacy().runRetention()).toBe(false);
    expect(await privacy().runRetention(true)).toBe(true);
    await inStep();
    expect(await scansStored(ch, aId, before.a)).toBe(true);
  });
});
