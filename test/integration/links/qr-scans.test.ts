// QR scans told from clicks (issue 43, item 4), through real HTTP: the QR codes the service renders
// (public /:shortId/qr and POST /api/v1/qr) are decoded and followed; the redirect strips the
// marker, and each scan's trigger is in the `scans` topic, ClickHouse, the export and the analytics
// (the workspace's, a link's, with a country filter), where scans without one count as link.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import { client, freshIp, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';
import { readTopic } from '../../support/topic-reader.ts';
import { createdLink, ingressWithWorkspace, type ApiClient } from '../../support/links/ingress-with-workspace.ts';
import { decodeQr, svgToPng } from '../../support/links/decode.ts';
import { DESKTOP_UA, hostSinks, scan, scansStored } from '../../support/links/scans.ts';

let ingress: TestIngress;
let api: ApiClient;
let key: string;
let workspaceId: string;
let stopSinks: () => Promise<void>;

beforeAll(async () => {
  ({ ingress, api, key, workspaceId } = await ingressWithWorkspace());
  stopSinks = await hostSinks(ingress.platform);
}, 180_000);

afterAll(async () => {
  await stopSinks?.();
  await ingress?.close();
});

/**
 * Follows a URL a scanner decoded, as the phone would (from a fresh client IP), without following the
 * redirect; sent to this test's ingress (the short-link base names the service's usual port).
 */
async function follow(url: string) {
  const decoded = new URL(url);
  const res = await fetch(`${ingress.url}${decoded.pathname}${decoded.search}`, { redirect: 'manual', headers: { 'user-agent': DESKTOP_UA, 'x-forwarded-for': freshIp() } });
  return { status: res.status, location: res.headers.get('location') ?? '' };
}

const HOUR = 3_600_000;
const range = () => `from=${new Date(Math.floor(Date.now() / HOUR) * HOUR - HOUR).toISOString()}&to=${new Date(Math.ceil(Date.now() / HOUR) * HOUR + HOUR).toISOString()}`;

describe('QR scans', () => {
  it('are told from clicks from the rendered code to the analytics, the marker never reaching the destination', async () => {
    const link = await createdLink(api, { destination: 'https://example.com/menu?table=1' });
    const other = await createdLink(api, { destination: 'https://example.com/other' });

    // The public QR image, decoded and followed: the marker is on the short URL, not on the destination.
    const publicPng = await fetch(`${ingress.url}/${link.shortId}/qr`, { headers: { 'x-forwarded-for': freshIp() } });
    const publicUrl = decodeQr(Buffer.from(await publicPng.arrayBuffer()))!;
    expect(publicUrl).toBe(`${link.shortUrl}?qr`);
    const fromPublic = await follow(publicUrl);
    expect(fromPublic.status).toBe(302);
    expect(fromPublic.location).toMatch(/^https:\/\/example\.com\/menu\?table=1&svc_cid=[^&]+$/);

    // The API's QR code (SVG), decoded and followed, with a parameter of the visitor's own beside the marker.
    const svg = await fetch(`${ingress.url}/api/v1/qr`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-forwarded-for': freshIp() }, body: JSON.stringify({ shortId: other.shortId, format: 'svg' }) });
    expect(svg.status).toBe(200);
    const apiUrl = decodeQr(svgToPng(Buffer.from(await svg.arrayBuffer())))!;
    expect(apiUrl).toBe(`${other.shortUrl}?qr`);
    const fromApi = await follow(`${apiUrl}&utm_source=poster`);
    expect(fromApi.location).toMatch(/^https:\/\/example\.com\/other\?utm_source=poster&svc_cid=[^&]+$/);

    // Clicks: the plain short URL, and a query whose own qr=… is not the marker (forwarded as it is).
    expect((await scan(ingress.url, link.shortId)).status).toBe(302);
    const ownQr = await scan(ingress.url, `${link.shortId}?qr=menu`);
    expect(ownQr.location).toMatch(/^https:\/\/example\.com\/menu\?table=1&qr=menu&svc_cid=/);

    // The topic carries the trigger (read through the registry, as a data team would).
    const published = (await readTopic<ScanEvent>(ingress.platform.config, 'scans', (m) => m.filter((x) => x.value.workspaceId === workspaceId).length >= 4))
      .filter((m) => m.value.workspaceId === workspaceId).map((m) => m.value);
    expect(published.map((s) => `${s.shortId}:${s.trigger}`).sort()).toEqual([`${link.shortId}:link`, `${link.shortId}:link`, `${link.shortId}:qr`, `${other.shortId}:qr`].sort());
    // The recorded query has no marker either (its utm_* are read from it).
    expect(published.find((s) => s.shortId === other.shortId)).toMatchObject({ trigger: 'qr', utmSource: 'poster' });

    // ClickHouse, with a scan stored before triggers existed (no value: the column's default).
    const ch = ingress.platform.clickhouse;
    await ch.exec(sql`INSERT INTO scans_input (scan_id, click_id, workspace_id, link_id, short_id, campaign_id, ts, destination, country, region, city, device, os, browser, referrer, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content, is_bot, user_agent, visitor_id)
      VALUES (${randomUUID()}, 'old', ${workspaceId}, ${link.id}, ${link.shortId}, '', ${new Date()}, 'https://example.com/menu', 'US', '', '', 'desktop', '', '', '', '', '', '', '', '', '', 0, '', 'old-visitor')`);
    await eventually(() => scansStored(ch, workspaceId, 5), 30_000);
    const stored = await ch.rows<{ trigger: string; n: string }>(sql`SELECT trigger, count() AS n FROM scans WHERE workspace_id = ${workspaceId} GROUP BY trigger ORDER BY trigger`);
    expect(stored.map((r) => [r.trigger, Number(r.n)])).toEqual([['link', 3], ['qr', 2]]);

    // Analytics: the workspace's, one link's, and a country filter that matches only the old scan.
    await eventually(async () => (await api.get(`/api/v1/analytics?${range()}`)).body.triggers?.[1]?.scans === 2, 10_000);
    const all = await api.get(`/api/v1/analytics?${range()}`);
    expect([all.body.totalScans, all.body.triggers]).toEqual([5, [{ trigger: 'link', scans: 3 }, { trigger: 'qr', scans: 2 }]]);
    const one = await api.get(`/api/v1/links/${other.id}/analytics?${range()}`);
    expect(one.body.triggers).toEqual([{ trigger: 'link', scans: 0 }, { trigger: 'qr', scans: 1 }]);
    const byLinkTag = await api.get(`/api/v1/analytics?${range()}&linkId=${link.id}`);
    expect(byLinkTag.body.triggers).toEqual([{ trigger: 'link', scans: 3 }, { trigger: 'qr', scans: 1 }]);
    const us = await api.get(`/api/v1/analytics?${range()}&country=us`);
    expect(us.body.triggers).toEqual([{ trigger: 'link', scans: 1 }, { trigger: 'qr', scans: 0 }]);

    // The export: JSON exactly, CSV with the column.
    const json = await api.get(`/api/v1/analytics/export?format=json&${range()}`);
    expect(json.body.map((r: { shortId: string; trigger: string }) => `${r.shortId}:${r.trigger}`).sort()).toEqual([`${link.shortId}:link`, `${link.shortId}:link`, `${link.shortId}:link`, `${link.shortId}:qr`, `${other.shortId}:qr`].sort());
    const csv = await fetch(`${ingress.url}/api/v1/analytics/export?format=csv&linkId=${other.id}&${range()}`, { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': freshIp() } });
    const [header, row] = (await csv.text()).trim().split('\n');
    expect(header!.split(',').at(-1)).toBe('"trigger"');
    expect(row!.split(',').at(-1)).toBe('"qr"');
  });

  it('a workspace\'s triggers are its own: another workspace\'s QR scans never count in them', async () => {
    const otherApi = client(ingress.url, (await workspaceWithKey(ingress.url)).key);
    const res = await otherApi.get(`/api/v1/analytics?${range()}`);
    expect(res.body.triggers).toEqual([{ trigger: 'link', scans: 0 }, { trigger: 'qr', scans: 0 }]);
  });
});
