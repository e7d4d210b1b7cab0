// Analytics pages (issue 54, item 2) over real HTTP, without a browser: a link's
// shares made, listed and revoked through the API (and refused across
// workspaces, with bad input, without the scope); the shared page rendered from
// the rollups (its numbers are the analytics API's, hostile values escaped, a
// CSP that allows only its own script), its ranges, its password form and that
// form's attempt limit, 404 for a share unknown, revoked or expired; the
// workspace's own page by sign-in and by page token, ended by revoking the key;
// and the pages' live streams: one link's scans only, no bots, nothing of the
// visitor, ended when the share is revoked, its link deleted or its workspace off
// the API's plan; resumed from a recent Last-Event-ID, started live from a far one.
// The browser's view of the same pages: analytics-page-browser.test.ts.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostWorkers } from '../../../src/platform/actors/host.ts';
import { scriptHash } from '../../../src/platform/http/html-page.ts';
import { PAGE_SCRIPT } from '../../../src/links/analytics-page/page-script.ts';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { scansTopic } from '../../../topics/scans.ts';
import { call, client, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';
import { linkScansStored, scanSink, scansStored } from '../../support/links/scans.ts';
import { openStream, type SseStream } from '../../support/links/sse-client.ts';
import { PAGE_RESUME_SCANS, PAGE_STREAMS_PER_WORKSPACE } from '../../../src/links/analytics-page/page-stream.ts';
import { LINKS_SHOWN } from '../../../src/links/analytics-page/page-routes.ts';

const HOUR = 3_600_000;
let ingress: TestIngress;
let api: ReturnType<typeof client>;
let other: ReturnType<typeof client>;
let workspaceId: string;
let otherWorkspaceId: string;
let link: { id: string; shortId: string };
let sibling: { id: string; shortId: string };
let stopSink: () => Promise<void>;
const now = Date.now();
const HOSTILE = '<script>alert(1)</script>"\'&';

function scanOf(l: { id: string; shortId: string }, fields: Partial<ScanEvent>): ScanEvent {
  return {
    scanId: randomUUID(), clickId: 'c', workspaceId, linkId: l.id, shortId: l.shortId, campaignId: null, timestamp: now - 2 * HOUR,
    destination: 'https://example.com/', country: 'DE', region: null, city: null, device: 'mobile', os: 'iOS', browser: 'Safari',
    referrer: null, referrerHost: null, utmSource: null, utmMedium: null, utmCampaign: null, utmTerm: null, utmContent: null,
    isBot: false, userAgent: 'ua', visitorId: `v-${randomUUID()}`, variant: null, trigger: 'link', ...fields,
  };
}

/** The numbers a page shows: its totals and each ranked table's rows (value → count), from the markup's data attributes. */
function numbersOf(html: string) {
  const stat = (name: string) => Number(new RegExp(`data-stat="${name}" data-count="(\\d+)"`).exec(html)?.[1]);
  const table = (dim: string) => {
    const part = new RegExp(`<table data-dim="${dim}">([\\s\\S]*?)</table>`).exec(html)?.[1] ?? '';
    return Object.fromEntries([...part.matchAll(/<tr data-value="([^"]*)">[\s\S]*?data-count="(\d+)"/g)].map((m) => [m[1], Number(m[2])]));
  };
  const series = [...html.matchAll(/<rect class="bar" data-start="(\d+)" data-scans="(\d+)"/g)].map((m) => ({ start: new Date(Number(m[1])).toISOString(), scans: Number(m[2]) }));
  const bars = series.reduce((n, b) => n + b.scans, 0);
  return { total: stat('total'), visitors: stat('visitors'), qr: stat('qr'), link: stat('link'), bars, series, country: table('country'), device: table('device'), browser: table('browser'), referrer: table('referrer'), variant: table('variant'), trigger: table('trigger') };
}

const page = (path: string, headers: Record<string, string> = {}) => call<string>(ingress.url, 'GET', path, { headers });
const form = (path: string, fields: Record<string, string>, ip = freshIp(), headers: Record<string, string> = {}) =>
  fetch(`${ingress.url}${path}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip, ...headers }, body: new URLSearchParams(fields).toString() });
const cookieFrom = (res: Response) => (res.headers.get('set-cookie') ?? '').split(';')[0]!;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', LIVE_STREAM_KEY_CHECK_MS: '200', LIVE_STREAM_HEARTBEAT_MS: '500' });
  const ws = await workspaceWithKey(ingress.url);
  workspaceId = ws.workspaceId;
  api = client(ingress.url, ws.key);
  const second = await workspaceWithKey(ingress.url);
  otherWorkspaceId = second.workspaceId;
  other = client(ingress.url, second.key);
  link = (await api.post('/api/v1/links', { destination: 'https://example.com/shared' })).body;
  sibling = (await api.post('/api/v1/links', { destination: 'https://example.com/sibling' })).body;
  // The shared link's scans: 40 from Germany on mobile Safari, 25 from the US on desktop Chrome (10 of them by QR code),
  // 5 with a hostile referrer and A/B variant, 7 bots; the sibling's 11 must not show on the share.
  const events = [
    ...Array.from({ length: 40 }, () => scanOf(link, {})),
    ...Array.from({ length: 25 }, (_, i) => scanOf(link, { country: 'US', device: 'desktop', browser: 'Chrome', referrerHost: 'news.example', trigger: i < 10 ? 'qr' : 'link' })),
    ...Array.from({ length: 5 }, () => scanOf(link, { referrerHost: HOSTILE, variant: `https://example.com/b?x=${HOSTILE}` })),
    ...Array.from({ length: 7 }, () => scanOf(link, { isBot: true, device: 'bot' })),
    ...Array.from({ length: 11 }, () => scanOf(sibling, { country: 'FR' })),
  ];
  await ingress.platform.publisher.publish(scansTopic, events.map((e) => ({ key: e.workspaceId, value: e })));
  const [runtime] = await hostWorkers(ingress.platform, [scanSink(ingress.platform)]);
  stopSink = () => runtime!.stop();
  await eventually(() => linkScansStored(ingress.platform.clickhouse, link.id, 77), 60_000, 250);
  await eventually(() => linkScansStored(ingress.platform.clickhouse, sibling.id, 11), 60_000, 250);
});
afterAll(async () => {
  await stopSink?.();
  await ingress?.close();
});

describe('shares through the API', () => {
  it('makes, lists and revokes a share; the password is never answered', async () => {
    const made = await api.post(`/api/v1/links/${link.id}/analytics/shares`, { password: 'open sesame', expiresAt: new Date(now + 86_400_000).toISOString() });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ object: 'analytics_share', linkId: link.id, status: 'active', passwordProtected: true, revokedAt: null });
    expect(made.body.id).toMatch(/^sh_[0-9A-Za-z]{24}$/);
    expect(made.body.url).toBe(`${ingress.platform.config.PUBLIC_BASE_URL}/analytics/${made.body.id}`);
    expect(JSON.stringify(made.body)).not.toContain('sesame');
    const listed = await api.get(`/api/v1/links/${link.id.toUpperCase()}/analytics/shares`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toContain(made.body.id);
    const revoked = await api.delete(`/api/v1/links/${link.id}/analytics/shares/${made.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe('revoked');
    const again = await api.delete(`/api/v1/links/${link.id}/analytics/shares/${made.body.id}`);
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
  });

  it('refuses another workspace, bad input and a key without the scope, changing nothing', async () => {
    const mine = (await api.post(`/api/v1/links/${link.id}/analytics/shares`, {})).body;
    expect((await other.post(`/api/v1/links/${link.id}/analytics/shares`, {})).status).toBe(404);
    expect((await other.get(`/api/v1/links/${link.id}/analytics/shares`)).status).toBe(404);
    expect((await other.delete(`/api/v1/links/${link.id}/analytics/shares/${mine.id}`)).status).toBe(404);
    expect((await api.delete(`/api/v1/links/${sibling.id}/analytics/shares/${mine.id}`)).status).toBe(404);
    expect((await api.post(`/api/v1/links/not-a-uuid/analytics/shares`, {})).status).toBe(404);
    const past = await api.post(`/api/v1/links/${link.id}/analytics/shares`, { expiresAt: new Date(now - 1000).toISOString() });
    expect([past.status, past.body.error.code]).toEqual([400, 'expiry_in_past']);
    const short = await api.post(`/api/v1/links/${link.id}/analytics/shares`, { password: 'abc' });
    expect([short.status, short.body.error.code]).toEqual([400, 'validation_failed']);
    const unknown = await api.post(`/api/v1/links/${link.id}/analytics/shares`, { public: true });
    expect(unknown.status).toBe(400);
    const readOnly = await api.post('/api/v1/keys', { name: 'reader', scopes: ['analytics:read'] });
    const reader = client(ingress.url, readOnly.body.key);
    const refused = await reader.post(`/api/v1/links/${link.id}/analytics/shares`, {});
    expect([refused.status, refused.body.error.code]).toEqual([403, 'insufficient_scope']);
    expect((await reader.get(`/api/v1/links/${link.id}/analytics/shares`)).status).toBe(200);
    expect((await page(`/analytics/${mine.id}`)).status).toBe(200);
  });
});

describe('the shared page', () => {
  let shareId: string;
  beforeAll(async () => {
    shareId = (await api.post(`/api/v1/links/${link.id}/analytics/shares`, {})).body.id;
  });

  it('shows the analytics API\'s numbers for the link, in HTML with the chart and tables, bots and other links left out', async () => {
    const res = await page(`/analytics/${shareId}?range=24h`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    // The API asked for the page's own range (as it printed it), whatever the clock did in between.
    const [, from, to] = /<main[^>]* data-from="(\d+)" data-to="(\d+)"/.exec(res.body)!.map(Number);
    const expected = (await api.get(`/api/v1/links/${link.id}/analytics?from=${new Date(from!).toISOString()}&to=${new Date(to!).toISOString()}&interval=hour`)).body;
    const shown = numbersOf(res.body);
    expect(shown.total).toBe(70);
    expect(expected.totalScans).toBe(70);
    expect(shown.bars).toBe(70);
    expect(shown.qr).toBe(10);
    expect(shown.link).toBe(60);
    // The same numbers as the API's, group by group (the page reads the same rollups its own way: page-queries.ts).
    const byValue = (rows: Record<string, string | number>[], key: string, count = 'count') => Object.fromEntries(rows.map((r) => [r[key], r[count]]));
    expect(shown.country).toEqual(byValue(expected.countries, 'country'));
    expect(shown.device).toEqual(byValue(expected.devices, 'device'));
    expect(shown.browser).toEqual(byValue(expected.browsers, 'browser'));
    expect(Object.values(shown.referrer).sort()).toEqual(Object.values(byValue(expected.referrers, 'referrer')).sort());
    expect(Object.values(shown.variant)).toEqual(Object.values(byValue(expected.variants, 'variant', 'scans')));
    expect(shown.trigger).toEqual(byValue(expected.triggers, 'trigger', 'scans'));
    expect(shown.visitors).toBe(expected.uniqueVisitors);
    expect(shown.series).toEqual(expected.timeseries.map((b: { start: string; scans: number }) => ({ start: b.start, scans: b.scans })));
    expect(shown.country).toEqual({ DE: 45, US: 25 });
    expect(shown.device).toEqual({ mobile: 45, desktop: 25 });
    expect(shown.browser).toEqual({ Safari: 45, Chrome: 25 });
    expect(shown.trigger).toEqual({ qr: 10, link: 60 });
    expect(Object.keys(shown.referrer).sort()).toEqual(['&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;', '(direct)', 'news.example'].sort());
    expect(Object.values(shown.variant)).toEqual([5]);
    // Every hostile value is escaped: no markup of it survives.
    expect(res.body).not.toContain('<script>alert(1)');
    expect(res.body).toContain('Germany (DE)');
    // The chart is in the HTML, and its data also as a table.
    expect(res.body).toMatch(/<svg class="chart"[^>]*role="img"/);
    expect(res.body).toContain('<table data-series>');
  });

  it('is sent never cached, never framed, with a CSP allowing only its own script and same-origin connections', async () => {
    const res = await page(`/analytics/${shareId}`);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain(`script-src ${scriptHash(PAGE_SCRIPT)}`);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    // The one script on the page is the hashed one.
    const scripts = [...res.body.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
    expect(scripts).toEqual([PAGE_SCRIPT]);
  });

  it('shows a chosen range in hour or day buckets, and refuses a range it cannot show with a 4xx page', async () => {
    const day = new Date(now).toISOString().slice(0, 10);
    const days = await page(`/analytics/${shareId}?from=${new Date(now - 3 * 86_400_000).toISOString().slice(0, 10)}&to=${day}&interval=day`);
    expect(days.status).toBe(200);
    expect([...days.body.matchAll(/<rect class="bar"/g)]).toHaveLength(4);
    expect(numbersOf(days.body).total).toBe(70);
    // Whole days (the daily rollups), days with hours around them (daily and hourly), hours: the API's numbers each time.
    for (const [query, apiRange] of [
      [`from=${new Date(now - 3 * 86_400_000).toISOString().slice(0, 10)}&to=${day}&interval=day`, `from=${new Date(now - 3 * 86_400_000).toISOString().slice(0, 10)}T00:00:00Z&to=${new Date(Date.parse(day) + 86_400_000).toISOString()}&interval=day`],
      [`from=${new Date(now - 2 * 86_400_000 - 5 * HOUR).toISOString()}&to=${new Date(now).toISOString()}&interval=day`, `from=${new Date(now - 2 * 86_400_000 - 5 * HOUR).toISOString()}&to=${new Date(now).toISOString()}&interval=day`],
      [`from=${new Date(now - 2 * 86_400_000 - 5 * HOUR).toISOString()}&to=${new Date(now).toISOString()}&interval=hour`, `from=${new Date(now - 2 * 86_400_000 - 5 * HOUR).toISOString()}&to=${new Date(now).toISOString()}&interval=hour`],
    ] as const) {
      const shownHere = numbersOf((await page(`/analytics/${shareId}?${query}`)).body);
      const answer = (await api.get(`/api/v1/links/${link.id}/analytics?${apiRange}`)).body;
      expect([query, shownHere.total, shownHere.visitors]).toEqual([query, answer.totalScans, answer.uniqueVisitors]);
      expect(shownHere.series).toEqual(answer.timeseries.map((b: { start: string; scans: number }) => ({ start: b.start, scans: b.scans })));
      expect(shownHere.country).toEqual(Object.fromEntries(answer.countries.map((c: { country: string; count: number }) => [c.country, c.count])));
    }
    const hours = await page(`/analytics/${shareId}?range=24h`);
    expect([...hours.body.matchAll(/<rect class="bar"/g)].length).toBeGreaterThanOrEqual(24);
    const earlier = await page(`/analytics/${shareId}?from=2020-01-01&to=2020-01-31`);
    expect(numbersOf(earlier.body).total).toBe(0);
    expect(earlier.body).toContain('No scans in this range.');
    for (const [query, code] of [['interval=week', 'validation_failed'], ['range=1y', 'validation_failed'], ['from=2024-02-01&to=2024-01-01', 'invalid_range'], ['from=yesterday', 'validation_failed'], ['from=2020-01-01&to=2024-01-01', 'invalid_range'], ['from=2024-01-01&to=2024-03-01&interval=hour', 'too_many_buckets'],
      // Dates of no calendar: refused, not a 500 (Invalid Date) nor read as another day (February 30th as March 1st).
      ['to=2024-13-45', 'validation_failed'], ['to=0000-00-00', 'validation_failed'], ['from=0000-00-00&to=2024-01-01', 'validation_failed'],
      ['from=2024-02-01&to=2024-02-30', 'validation_failed'], ['from=2024-02-30', 'validation_failed'], ['from=2023-02-29T00:00:00Z', 'validation_failed']]) {
      const res = await page(`/analytics/${shareId}?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.body).toContain(`data-code="${code}"`);
    }
  });

  it('answers 404 for a share unknown, malformed, revoked or expired', async () => {
    const revoked = (await api.post(`/api/v1/links/${link.id}/analytics/shares`, {})).body.id;
    expect((await page(`/analytics/${revoked}`)).status).toBe(200);
    await api.delete(`/api/v1/links/${link.id}/analytics/shares/${revoked}`);
    const expiring = (await api.post(`/api/v1/links/${link.id}/analytics/shares`, { expiresAt: new Date(Date.now() + 3_600_000).toISOString() })).body.id;
    expect((await page(`/analytics/${expiring}`)).status).toBe(200);
    // Its expiry comes: Postgres's clock decides (now()), so the stored time is moved to the past instead of waiting an hour.
    await ingress.platform.pg.query("UPDATE link_analytics_shares SET expires_at = now() - interval '1 second' WHERE id = $1", [expiring]);
    for (const id of [revoked, expiring, 'sh_000000000000000000000000', 'sh_short', '..%2Fadmin', shareId.toLowerCase() === shareId ? shareId.toUpperCase() : shareId.toLowerCase()]) {
      const res = await page(`/analytics/${id}`);
      expect([id, res.status]).toEqual([id, 404]);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect((await page(`/analytics/${id}/stream`)).status).toBe(404);
    }
    const listed = (await api.get(`/api/v1/links/${link.id}/analytics/shares`)).body.data;
    expect(listed.find((s: { id: string }) => s.id === expiring).status).toBe('expired');
  });
});

describe('the shared page when ClickHouse does not answer', () => {
  it('sends its start, then a message to reload in place of the numbers, and ends', async () => {
    const shareId = (await api.post(`/api/v1/links/${link.id}/analytics/shares`, {})).body.id;
    // An ingress of the same stack whose ClickHouse address answers nothing (a refused port).
    const blind = await startIngress({ CLICKHOUSE_URL: 'http://127.0.0.1:9' });
    try {
      const res = await call<string>(blind.url, 'GET', `/analytics/${shareId}`);
      expect(res.status).toBe(200);
      expect(res.body).toContain('<h1>Analytics of');
      expect(res.body).toContain('role="alert"><p>The analytics could not be loaded just now. Reload the page to try again.');
      expect(res.body).not.toContain('data-stat="total"');
      expect(res.body.trimEnd().endsWith('</body></html>')).toBe(true);
    } finally {
      await blind.close();
    }
  });
});

describe('a share with a password', () => {
  let shareId: string;
  beforeAll(async () => {
    shareId = (await api.post(`/api/v1/links/${link.id}/analytics/shares`, { password: 'correct horse' })).body.id;
  });

  it('asks for it on a form, refuses a wrong one, and lets the right one in for that share only', async () => {
    const asked = await page(`/analytics/${shareId}?range=24h`);
    expect(asked.status).toBe(200);
    expect(asked.body).toContain('<input id="password" name="password" type="password"');
    expect(asked.body).not.toContain('data-stat="total"');
    expect((await page(`/analytics/${shareId}/stream`)).status).toBe(404);
    const wrong = await form(`/analytics/${shareId}?range=24h`, { password: 'battery staple' });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('That password is not right');
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect((await form(`/analytics/${shareId}`, { password: '' })).status).toBe(400);
    const right = await form(`/analytics/${shareId}?range=24h`, { password: 'correct horse' });
    expect(right.status).toBe(303);
    expect(right.headers.get('location')).toBe(`/analytics/${shareId}?range=24h`);
    expect(right.headers.get('set-cookie')).toMatch(new RegExp(`^analytics_share=[A-Za-z0-9_-]{43}; Path=/analytics/${shareId}; Max-Age=\\d+; HttpOnly; SameSite=Strict$`));
    const cookie = cookieFrom(right);
    const shown = await page(`/analytics/${shareId}?range=24h`, { cookie });
    expect(numbersOf(shown.body).total).toBe(70);
    // The session is this share's alone: another protected share asks again.
    const another = (await api.post(`/api/v1/links/${link.id}/analytics/shares`, { password: 'correct horse' })).body.id;
    expect((await page(`/analytics/${another}`, { cookie })).body).toContain('name="password"');
    // Revoked: the session goes with it.
    await api.delete(`/api/v1/links/${link.id}/analytics/shares/${shareId}`);
    expect((await page(`/analytics/${shareId}`, { cookie })).status).toBe(404);
  });

  it('limits attempts per client IP and share as a link password\'s, right ones too', async () => {
    const id = (await api.post(`/api/v1/links/${link.id}/analytics/shares`, { password: 'correct horse' })).body.id;
    const ip = freshIp();
    for (let i = 0; i < 10; i++) expect((await form(`/analytics/${id}`, { password: `guess ${i}` }, ip)).status).toBe(401);
    const limited = await form(`/analytics/${id}`, { password: 'correct horse' }, ip);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('set-cookie')).toBeNull();
    // Another client is not held back.
    expect((await form(`/analytics/${id}`, { password: 'correct horse' })).status).toBe(303);
  });
});

describe('the workspace\'s own page', () => {
  it('signs in with a key, shows every link, and one link\'s own page; signs out', async () => {
    const blank = await page('/analytics');
    expect(blank.status).toBe(200);
    expect(blank.body).toContain('name="key"');
    const bad = await form('/analytics', { key: 'lk_live_00000000000000000000000000000000' });
    expect(bad.status).toBe(401);
    const noScope = await api.post('/api/v1/keys', { name: 'links only', scopes: ['links:read'] });
    expect((await form('/analytics', { key: noScope.body.key })).status).toBe(403);
    const reader = await api.post('/api/v1/keys', { name: 'reader', scopes: ['analytics:read'] });
    const signedIn = await form('/analytics', { key: reader.body.key });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('set-cookie')).toMatch(/^analytics_session=[A-Za-z0-9_-]{43}; Path=\/analytics; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    const cookie = cookieFrom(signedIn);
    const all = await page('/analytics?range=24h', { cookie });
    expect(all.status).toBe(200);
    const links = Object.fromEntries([...all.body.matchAll(/<tr data-value="([^"]*)"><th scope="row"><a href="([^"]*)">/g)].map((m) => [m[1], m[2]]));
    expect(Object.keys(links).sort()).toEqual([link.shortId, sibling.shortId].sort());
    expect(numbersOf(all.body).total).toBe(81);
    const one = await page(`/analytics${links[sibling.shortId]!.replaceAll('&amp;', '&')}`, { cookie });
    expect(numbersOf(one.body).total).toBe(11);
    expect(numbersOf(one.body).country).toEqual({ FR: 11 });
    expect((await page(`/analytics?link=nope`, { cookie })).status).toBe(404);
    // Another workspace's link is not found either.
    const foreign = (await other.post('/api/v1/links', { destination: 'https://example.com/theirs' })).body;
    expect((await page(`/analytics?link=${foreign.shortId}`, { cookie })).status).toBe(404);
    const out = await form('/analytics', { signOut: '1' }, freshIp(), { cookie });
    expect(out.status).toBe(303);
    expect((await page('/analytics', { cookie })).body).toContain('name="key"');
  });

  it('opens by page token until the key is revoked', async () => {
    const made = await api.post('/api/v1/keys', { name: 'token maker', scopes: ['analytics:read'] });
    const maker = client(ingress.url, made.body.key);
    const issued = await maker.post('/api/v1/analytics/page-tokens', { expiresInSeconds: 600 });
    expect(issued.status).toBe(201);
    expect(issued.body.url).toBe(`${ingress.platform.config.PUBLIC_BASE_URL}/analytics?token=${issued.body.token}`);
    const path = `/analytics?token=${issued.body.token}&range=24h`;
    const shown = await page(path);
    expect(numbersOf(shown.body).total).toBe(81);
    // Its links keep the token, the refusal of a range's too.
    expect(shown.body).toContain(`token=${issued.body.token}`);
    const refused = await page(`/analytics?token=${issued.body.token}&interval=week`);
    expect(refused.status).toBe(400);
    expect(refused.body).toContain(`<a href="?token=${issued.body.token}">Show the last 7 days</a>`);
    expect((await maker.post('/api/v1/analytics/page-tokens', { expiresInSeconds: 10 })).status).toBe(400);
    expect((await api.delete(`/api/v1/keys/${made.body.id}`)).status).toBe(200);
    const after = await page(path);
    expect(after.status).toBe(401);
    expect(after.body).toContain('not valid or has expired');
    expect((await page(`/analytics?token=${'x'.repeat(43)}`)).status).toBe(401);
  });

  it('lists the most scanned links, at most LINKS_SHOWN, and says how many more were scanned', async () => {
    const ws = await workspaceWithKey(ingress.url);
    const n = LINKS_SHOWN + 3;
    // One scan each of n links (the rollups key them by short ID), the first link twice more: it comes first.
    const links = Array.from({ length: n }, (_, i) => ({ id: randomUUID(), shortId: `many-${String(i).padStart(3, '0')}` }));
    const events = [...links, links[0]!, links[0]!].map((l) => ({ ...scanOf(l, {}), workspaceId: ws.workspaceId }));
    await ingress.platform.publisher.publish(scansTopic, events.map((e) => ({ key: e.workspaceId, value: e })));
    await eventually(() => scansStored(ingress.platform.clickhouse, ws.workspaceId, n + 2), 60_000, 250);
    const token = (await client(ingress.url, ws.key).post('/api/v1/analytics/page-tokens', {})).body.token;
    const res = await page(`/analytics?token=${token}&range=24h`);
    expect(res.status).toBe(200);
    const table = /<table data-dim="link">([\s\S]*?)<\/table>/.exec(res.body)![1]!;
    const rows = [...table.matchAll(/<tr data-value="([^"]*)">/g)].map((m) => m[1]);
    expect(rows).toHaveLength(LINKS_SHOWN);
    expect(rows[0]).toBe(links[0]!.shortId);
    expect(res.body).toContain('And 3 more links scanned in this range');
    expect(numbersOf(res.body).total).toBe(n + 2);
  });
});

describe('the pages\' live streams', () => {
  const streams: SseStream[] = [];
  afterAll(() => {
    for (const s of streams) s.close?.();
  });

  it('carries the shared link\'s scans only, without bots or anything of the visitor, and ends when the share is revoked', async () => {
    const shareId = (await api.post(`/api/v1/links/${link.id}/analytics/shares`, {})).body.id;
    const shared = await openStream(ingress.url, `/analytics/${shareId}/stream`, undefined);
    // A second viewer of the same share (their permission is checked once for both).
    const alsoShared = await openStream(ingress.url, `/analytics/${shareId}/stream`, undefined);
    streams.push(alsoShared);
    const workspace = await openStream(ingress.url, `/analytics/stream?token=${(await api.post('/api/v1/analytics/page-tokens', {})).body.token}`, undefined);
    streams.push(shared, workspace);
    expect(shared.status).toBe(200);
    expect(shared.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const t = Date.now();
    const mine = scanOf(link, { timestamp: t, country: 'JP', referrerHost: 'ref.example', visitorId: 'secret-visitor', userAgent: 'secret-agent', clickId: 'secret-click' });
    const bot = scanOf(link, { timestamp: t, isBot: true, device: 'bot' });
    const theirs = scanOf(sibling, { timestamp: t });
    // Another workspace's scan, side by side on the same topic: on none of these streams.
    const foreignLink = (await other.post('/api/v1/links', { destination: 'https://example.com/foreign' })).body;
    const foreign = scanOf(foreignLink, { timestamp: t, workspaceId: otherWorkspaceId });
    await ingress.platform.publisher.publish(scansTopic, [bot, foreign, mine, theirs].map((e) => ({ key: e.workspaceId, value: e })));
    await shared.until((events) => events.some((e) => e.event === 'scan'), 10_000, 'the shared link\'s scan');
    const event = shared.events.find((e) => e.event === 'scan');
    expect(JSON.parse(event!.data)).toEqual({ t, shortId: link.shortId, country: 'JP', device: 'mobile', browser: 'Safari', referrer: 'ref.example', variant: null, trigger: 'link' });
    expect(event!.data).not.toMatch(/secret/);
    // The workspace's page stream has both links' scans (the bot still left out).
    await workspace.until((events) => events.filter((e) => e.event === 'scan').length >= 2, 10_000, 'both links\' scans');
    expect(workspace.scans().map((s) => s.shortId).sort()).toEqual([link.shortId, sibling.shortId].sort());
    expect(JSON.stringify(workspace.events)).not.toContain(foreignLink.shortId);
    await api.delete(`/api/v1/links/${link.id}/analytics/shares/${shareId}`);
    await shared.until((events) => events.some((e) => e.event === 'end'), 5000, 'the end of the revoked share\'s stream');
    expect(JSON.parse(shared.events.find((e) => e.event === 'end')!.data)).toEqual({ reason: 'revoked' });
    await shared.ended;
    await alsoShared.until((events) => events.some((e) => e.event === 'end'), 5000, 'the end of the second viewer\'s stream');
    expect(alsoShared.scans()).toHaveLength(1);
    await alsoShared.ended;
    // Nothing but the one scan came on the shared stream.
    expect(shared.events.filter((e) => e.event === 'scan')).toHaveLength(1);
  });

  it('answers HEAD with a stream\'s headers and no stream', async () => {
    const shareId = (await api.post(`/api/v1/links/${link.id}/analytics/shares`, {})).body.id;
    const res = await fetch(`${ingress.url}/analytics/${shareId}/stream`, { method: 'HEAD' });
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
    expect(await res.text()).toBe('');
  });

  it('holds at most PAGE_STREAMS_PER_WORKSPACE page streams of a workspace on an ingress, another workspace\'s apart', async () => {
    // A workspace of its own, with no stream open yet.
    const fresh = client(ingress.url, (await workspaceWithKey(ingress.url)).key);
    const token = (await fresh.post('/api/v1/analytics/page-tokens', {})).body.token;
    const path = `/analytics/stream?token=${token}`;
    // Opened all at once, and ten more: the bound holds under concurrency.
    const opened = await Promise.all(Array.from({ length: PAGE_STREAMS_PER_WORKSPACE + 10 }, () => openStream(ingress.url, path, undefined)));
    streams.push(...opened);
    const held = opened.filter((s) => s.status === 200);
    expect(held).toHaveLength(PAGE_STREAMS_PER_WORKSPACE);
    expect(opened.filter((s) => s.status !== 200).map((s) => s.status)).toEqual(Array(10).fill(429));
    const refused = await openStream(ingress.url, path, undefined);
    expect([refused.status, refused.body?.error?.code, Number(refused.headers['retry-after'])]).toEqual([429, 'too_many_streams', 30]);
    // Another workspace is not held back by this one's streams.
    const theirs = await openStream(ingress.url, `/analytics/stream?token=${(await other.post('/api/v1/analytics/page-tokens', {})).body.token}`, undefined);
    streams.push(theirs);
    expect(theirs.status).toBe(200);
    // A stream closed frees its place.
    held[0]!.close();
    await eventually(async () => {
      const again = await openStream(ingress.url, path, undefined);
      streams.push(again);
      return again.status === 200;
    }, 5000, 50);
    for (const s of held) s.close();
  });

  it('resumes a page stream from a recent Last-Event-ID, and starts one from far back live instead of replaying the ring', async () => {
    // A workspace of its own: only its scans count towards the bound.
    const ws = await workspaceWithKey(ingress.url);
    const wsApi = client(ingress.url, ws.key);
    const mine = (await wsApi.post('/api/v1/links', { destination: 'https://example.com/resume' })).body;
    const path = `/analytics/${(await wsApi.post(`/api/v1/links/${mine.id}/analytics/shares`, {})).body.id}/stream`;
    const scanOfMine = (referrerHost: string) => ({ ...scanOf(mine, { timestamp: Date.now(), referrerHost }), workspaceId: ws.workspaceId });
    const publish = (events: ScanEvent[]) => ingress.platform.publisher.publish(scansTopic, events.map((e) => ({ key: e.workspaceId, value: e })));
    const first = await openStream(ingress.url, path, undefined);
    streams.push(first);
    await first.until(() => first.lastEventId() !== '', 5000, 'a first position');
    const from = first.lastEventId();
    first.close();
    // Missed while away, a moment ago: a reconnecting page gets them.
    await publish(['r-0', 'r-1', 'r-2'].map(scanOfMine));
    const resumed = await openStream(ingress.url, path, undefined, { 'last-event-id': from });
    streams.push(resumed);
    await resumed.until((e) => e.filter((x) => x.event === 'scan').length >= 3, 10_000, 'the three missed scans');
    expect(resumed.scans().map((x) => x.referrer)).toEqual(['r-0', 'r-1', 'r-2']);

    // More scans of the link than a page replays; an API stream (its documented resume) takes them all from the ring.
    const many = PAGE_RESUME_SCANS + 100;
    await publish(Array.from({ length: many }, (_, i) => scanOfMine(`m-${i}`)));
    const farBack = Array.from({ length: scansTopic.partitions }, (_, p) => `${p}.-1`).join('_');
    const apiStream = await openStream(ingress.url, `/api/v1/links/${mine.id}/analytics/stream`, ws.key, { 'last-event-id': farBack });
    streams.push(apiStream);
    await apiStream.until((e) => e.filter((x) => x.event === 'scan').length >= many + 3, 20_000, 'every scan of the link, replayed');
    // A page stream from the same cursor starts live: none of them, then the next scan.
    const fromFar = await openStream(ingress.url, path, undefined, { 'last-event-id': farBack });
    streams.push(fromFar);
    expect(fromFar.status).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    expect(fromFar.scans()).toEqual([]);
    await publish([scanOfMine('next')]);
    await fromFar.until((e) => e.some((x) => x.event === 'scan'), 10_000, 'the next scan, live');
    expect(fromFar.scans().map((x) => x.referrer)).toEqual(['next']);
  });

  it('a share of a link deleted, or of a workspace whose plan lost the API, answers 404 and its open streams end', async () => {
    const ws = await workspaceWithKey(ingress.url);
    const wsApi = client(ingress.url, ws.key);
    const mine = (await wsApi.post('/api/v1/links', { destination: 'https://example.com/deleted' })).body;
    const shareId = (await wsApi.post(`/api/v1/links/${mine.id}/analytics/shares`, {})).body.id;
    const ended = async (s: SseStream) => {
      await s.until((events) => events.some((e) => e.event === 'end'), 5000, 'the end of the stream');
      expect(JSON.parse(s.events.find((e) => e.event === 'end')!.data)).toEqual({ reason: 'revoked' });
    };
    const open = async () => {
      const s = await openStream(ingress.url, `/analytics/${shareId}/stream`, undefined);
      streams.push(s);
      expect(s.status).toBe(200);
      return s;
    };
    expect((await page(`/analytics/${shareId}`)).status).toBe(200);
    const beforeDelete = await open();
    expect((await wsApi.delete(`/api/v1/links/${mine.id}`)).status).toBe(200);
    expect((await page(`/analytics/${shareId}`)).status).toBe(404);
    expect((await page(`/analytics/${shareId}/stream`)).status).toBe(404);
    await ended(beforeDelete);
    // A soft delete is undone by reactivating the link: the share is back.
    expect((await wsApi.patch(`/api/v1/links/${mine.id}`, { isActive: true })).status).toBe(200);
    expect((await page(`/analytics/${shareId}`)).status).toBe(200);

    const beforeDowngrade = await open();
    await ingress.platform.pg.query("UPDATE workspaces SET plan = 'pro' WHERE id = $1", [ws.workspaceId]);
    expect((await page(`/analytics/${shareId}`)).status).toBe(404);
    expect((await page(`/analytics/${shareId}/stream`)).status).toBe(404);
    await ended(beforeDowngrade);
  });

  it('refuses a stream without a session', async () => {
    expect((await page('/analytics/stream')).status).toBe(401);
    expect((await page(`/analytics/stream?token=${'y'.repeat(43)}`)).status).toBe(401);
  });
});

