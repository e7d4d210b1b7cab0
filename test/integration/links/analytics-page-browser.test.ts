// The shared analytics page in a real browser (Debian's chromium, headless, driven
// by playwright-core, as the pixel and preferences pages' tests): the page opens
// on a week of a link's scans (history from ClickHouse), the test makes redirects
// of that link, by link and by QR code, and the page's numbers, tables and chart
// change without a reload (its live stream); a redirect of another link changes
// nothing; when the hour turns, the chart gains its bucket. A screenshot of it goes to .stack/analytics-page.png (docs/ with UPDATE_DOCS_SCREENSHOT=1). Without JavaScript
// the page shows the same numbers and the chart. A revoked or expired share
// answers 404; a share with a password asks for it on a form, refuses a wrong one
// and shows the page for the right one. The workspace's own page signs in with a key on its form.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostWorkers } from '../../../src/platform/actors/host.ts';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { scansTopic } from '../../../topics/scans.ts';
import { client, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';
import { DESKTOP_UA, linkScansStored, scan, scanSink } from '../../support/links/scans.ts';

const CHROMIUM = '/usr/bin/chromium';
// The screenshot goes to .stack/ on every run (a run leaves the tree as it found it); UPDATE_DOCS_SCREENSHOT=1
// writes the one in docs/ that the docs show.
const SCREENSHOT = fileURLToPath(new URL(process.env.UPDATE_DOCS_SCREENSHOT === '1' ? '../../../docs/analytics-page.png' : '../../../.stack/analytics-page.png', import.meta.url));
const HOUR = 3_600_000;
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

let ingress: TestIngress;
let api: ReturnType<typeof client>;
let browser: Browser;
let stopSink: () => Promise<void>;
let link: { id: string; shortId: string };
let sibling: { id: string; shortId: string };
let history = 0;
/** Redirects of the shared link the tests made. */
let made = 0;

// A small deterministic generator, so the screenshot is the same on every run but for the time axis.
let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const pick = <T>(xs: readonly (readonly [T, number])[]): T => {
  let r = rand() * xs.reduce((n, [, w]) => n + w, 0);
  for (const [x, w] of xs) if ((r -= w) < 0) return x;
  return xs.at(-1)![0];
};

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', REDIRECTS_PER_MINUTE_PER_IP: '100000' });
  const ws = await workspaceWithKey(ingress.url);
  api = client(ingress.url, ws.key);
  link = (await api.post('/api/v1/links', {
    destination: 'https://example.com/spring', title: 'Spring poster',
    testVariants: [{ url: 'https://example.com/spring?v=a', percent: 50 }, { url: 'https://example.com/spring?v=b', percent: 50 }],
  })).body;
  sibling = (await api.post('/api/v1/links', { destination: 'https://example.com/other' })).body;
  // A week of history, more by day than by night, straight onto the topic the redirect writes to.
  const now = Date.now();
  const events: ScanEvent[] = [];
  for (let h = 7 * 24; h >= 1; h--) {
    const hourOfDay = new Date(now - h * HOUR).getUTCHours();
    const n = Math.round((hourOfDay >= 7 && hourOfDay <= 21 ? 6 : 1) * (0.5 + rand()) * (1 + (7 * 24 - h) / 120));
    for (let i = 0; i < n; i++) {
      const variant = rand() < 0.5 ? 'a' : 'b';
      events.push({
        scanId: randomUUID(), clickId: 'c', workspaceId: ws.workspaceId, linkId: link.id, shortId: link.shortId, campaignId: null,
        timestamp: now - h * HOUR + Math.floor(rand() * HOUR), destination: `https://example.com/spring?v=${variant}`,
        country: pick([['DE', 40], ['US', 25], ['FR', 12], ['GB', 10], ['NL', 6], ['JP', 4], ['BR', 3]]), region: null, city: null,
        device: pick([['mobile', 65], ['desktop', 28], ['tablet', 7]]), os: pick([['iOS', 40], ['Android', 30], ['Windows', 20], ['macOS', 10]]),
        browser: pick([['Safari', 40], ['Chrome', 42], ['Firefox', 9], ['Samsung Internet', 6], ['Edge', 3]]),
        referrer: null, referrerHost: pick([[null, 50], ['instagram.com', 20], ['news.example.org', 14], ['t.co', 10], ['www.google.com', 6]]),
        utmSource: null, utmMedium: null, utmCampaign: null, utmTerm: null, utmContent: null,
        isBot: false, userAgent: null, visitorId: `v${Math.floor(rand() * 600)}`,
        variant: `https://example.com/spring?v=${variant}`, trigger: rand() < 0.62 ? 'qr' : 'link',
      });
    }
  }
  history = events.length;
  await ingress.platform.publisher.publish(scansTopic, events.map((e) => ({ key: e.workspaceId, value: e })));
  const [runtime] = await hostWorkers(ingress.platform, [scanSink(ingress.platform)]);
  stopSink = () => runtime!.stop();
  await eventually(() => linkScansStored(ingress.platform.clickhouse, link.id, history), 60_000, 250);
  await eventually(async () => ingress.app.redirects.cache.get(link.shortId) !== undefined && ingress.app.redirects.cache.get(sibling.shortId) !== undefined, 5000, 20);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopSink?.();
  await ingress?.close();
});

const share = async (body: Record<string, unknown> = {}) => {
  const res = await api.post(`/api/v1/links/${link.id}/analytics/shares`, body);
  expect(res.status).toBe(201);
  return res.body as { id: string; url: string };
};

/** What the page shows now: its totals, a country's row, the chart's bars (and those from `since` on) and the series table's sum. */
const shown = (page: Page, since = Infinity) => page.evaluate((since) => {
  const count = (selector: string) => Number(document.querySelector<HTMLElement>(selector)?.dataset.count ?? NaN);
  const chart = document.querySelector<SVGSVGElement>('svg.chart')!;
  const bars = Array.from(chart.querySelectorAll<SVGRectElement>('rect.bar'));
  const cells = Array.from(document.querySelectorAll<HTMLElement>('table[data-series] td[data-count]'));
  const row = (dim: string, value: string) => Array.from(document.querySelectorAll<HTMLTableRowElement>(`table[data-dim="${dim}"] tbody tr`)).find((r) => r.dataset.value === value);
  return {
    total: count('[data-stat="total"]'),
    totalText: document.querySelector('[data-stat="total"]')!.textContent,
    qr: count('[data-stat="qr"]'),
    link: count('[data-stat="link"]'),
    barScans: bars.reduce((n, b) => n + Number(b.dataset.scans), 0),
    // The chart's scale: a bar is scans / max of the plot's height (max grows to a round number when a bar passes it).
    max: Number(chart.dataset.max),
    plotHeight: Number(chart.dataset.plotHeight),
    lastBar: { start: Number(bars.at(-1)!.dataset.start), scans: Number(bars.at(-1)!.dataset.scans), height: Number(bars.at(-1)!.getAttribute('height')) },
    // The bars from `since` on: the hour of the page's loading, and the next should it turn meanwhile.
    recent: bars.filter((b) => Number(b.dataset.start) >= since).reduce((n, b) => ({ scans: n.scans + Number(b.dataset.scans), height: n.height + Number(b.getAttribute('height')) }), { scans: 0, height: 0 }),
    seriesSum: cells.reduce((n, c) => n + Number(c.dataset.count), 0),
    gbRow: row('country', 'GB')?.querySelector<HTMLElement>('[data-count]')?.dataset.count,
    firefox: row('browser', 'Firefox')?.querySelector<HTMLElement>('[data-count]')?.dataset.count,
    status: document.getElementById('live-status')?.textContent,
    // Set before the redirects: still here means the page was never reloaded.
    marker: (window as unknown as { marker?: string }).marker,
  };
}, since);

describe('the shared analytics page in a browser', () => {
  it('changes its numbers and chart as the link is scanned, without a reload', async () => {
    const { url } = await share();
    const context = await browser.newContext({ userAgent: DESKTOP_UA, viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    try {
      const res = await page.goto(url.replace(ingress.platform.config.PUBLIC_BASE_URL, ingress.url));
      expect(res?.status()).toBe(200);
      await page.waitForFunction(() => document.getElementById('live-status')?.textContent === 'Live', undefined, { timeout: 10_000 });
      const before = await shown(page);
      expect(before.total).toBe(history);
      expect(before.barScans).toBe(history);
      expect(before.seriesSum).toBe(history);
      await page.evaluate(() => ((window as unknown as { marker: string }).marker = 'same page'));
      // 3 clicks from GB (an address the geo database places there) on an iPhone, 2 QR scans on a desktop Firefox, and one of another link.
      for (let i = 0; i < 3; i++) expect((await scan(ingress.url, link.shortId, { 'x-forwarded-for': '81.2.69.160', 'user-agent': IPHONE })).status).toBe(302);
      for (let i = 0; i < 2; i++) expect((await scan(ingress.url, `${link.shortId}?qr`, { 'x-forwarded-for': freshIp(), 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0' })).status).toBe(302);
      expect((await scan(ingress.url, sibling.shortId)).status).toBe(302);
      made += 5;
      await page.waitForFunction((n) => Number(document.querySelector<HTMLElement>('[data-stat="total"]')!.dataset.count) >= n, history + 5, { timeout: 15_000 });
      const after = await shown(page, before.lastBar.start);
      expect(after.marker).toBe('same page');
      expect(after.total).toBe(history + 5);
      expect(after.totalText).toBe(new Intl.NumberFormat('en').format(history + 5));
      expect(after.qr).toBe(before.qr + 2);
      expect(after.link).toBe(before.link + 3);
      expect(after.barScans).toBe(history + 5);
      expect(after.seriesSum).toBe(history + 5);
      expect(after.recent.scans).toBe(before.lastBar.scans + 5);
      // Redrawn to the chart's scale, which may have grown with them (then every bar is lower): drawn
      // to scale, and higher than before unless the scale grew.
      expect(after.recent.height).toBeCloseTo((after.recent.scans / after.max) * after.plotHeight, 1);
      expect(after.max).toBeGreaterThanOrEqual(before.max);
      if (after.max === before.max) expect(after.recent.height).toBeGreaterThan(before.lastBar.height);
      expect(Number(after.gbRow)).toBe(Number(before.gbRow ?? 0) + 3);
      expect(Number(after.firefox)).toBe(Number(before.firefox ?? 0) + 2);
      // The other link's scan never came: the total stays.
      await page.waitForTimeout(1000);
      expect((await shown(page)).total).toBe(history + 5);
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      // The hour turns while the page is open: as if it had been loaded an hour earlier (its last bucket not yet in
      // the range), a scan now adds the bucket, laid out with the others, and is counted in it.
      const turned = await page.evaluate(() => {
        const main = document.querySelector<HTMLElement>('main')!;
        const bars = document.querySelectorAll<SVGRectElement>('svg.chart rect.bar');
        const last = bars[bars.length - 1]!;
        main.dataset.to = last.dataset.start!;
        last.remove();
        document.querySelector('table[data-series] tbody tr:last-child')!.remove();
        return { bars: bars.length, to: Number(last.dataset.start) + 3_600_000 };
      });
      expect((await scan(ingress.url, link.shortId)).status).toBe(302);
      made += 1;
      const scannedBefore = Date.now() + 1000;
      await page.waitForFunction((n) => Number(document.querySelector<HTMLElement>('[data-stat="total"]')!.dataset.count) === n, history + 6, { timeout: 15_000 });
      const grown = await page.evaluate((since) => {
        const bars = Array.from(document.querySelectorAll<SVGRectElement>('svg.chart rect.bar'));
        const rows = Array.from(document.querySelectorAll<HTMLElement>('table[data-series] tbody tr'));
        return {
          to: Number(document.querySelector<HTMLElement>('main')!.dataset.to),
          starts: bars.map((b) => Number(b.dataset.start)),
          rowStarts: rows.map((r) => Number(r.dataset.start)),
          sinceScans: bars.filter((b) => Number(b.dataset.start) >= since).reduce((n, b) => n + Number(b.dataset.scans), 0),
          sinceRows: rows.filter((r) => Number(r.dataset.start) >= since).reduce((n, r) => n + Number(r.querySelector<HTMLElement>('[data-count]')!.dataset.count), 0),
          widths: new Set(bars.map((b) => b.getAttribute('width'))).size,
          ordered: bars.every((b, i) => i === 0 || Number(b.getAttribute('x')) > Number(bars[i - 1]!.getAttribute('x'))),
        };
      }, turned.to - 3_600_000);
      // The bucket came back (and one more, should the hour really have turned meanwhile), hour after hour, up to the range's end, holding the scan.
      expect(grown.starts.length).toBeGreaterThanOrEqual(turned.bars);
      expect(grown.starts.every((t, i) => i === 0 || t - grown.starts[i - 1]! === 3_600_000)).toBe(true);
      expect(grown.rowStarts).toEqual(grown.starts);
      expect(grown.to).toBe(grown.starts.at(-1)! + 3_600_000);
      expect(grown.to).toBeGreaterThan(scannedBefore - 3_600_000);
      expect([grown.sinceScans, grown.sinceRows, grown.widths, grown.ordered]).toEqual([1, 1, 1, true]);
      expect((await shown(page)).total).toBe(history + 6);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows the same numbers and the chart without JavaScript, with headings, captions and labels', async () => {
    const { id } = await share();
    // Every scan made so far is stored, so both ranges below count the same.
    await eventually(() => linkScansStored(ingress.platform.clickhouse, link.id, history + made), 60_000, 250);
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    try {
      await page.goto(`${ingress.url}/analytics/${id}`);
      const total = Number(await page.getAttribute('[data-stat="total"]', 'data-count'));
      expect(total).toBe(history + made);
      expect(await page.locator('svg.chart rect.bar').count()).toBeGreaterThanOrEqual(7 * 24);
      expect(await page.getAttribute('svg.chart', 'role')).toBe('img');
      expect(await page.textContent('#chart-title')).toBe('Scans per hour');
      expect(await page.locator('h1').count()).toBe(1);
      // Every table has a caption and column headers; every form field a label.
      for (const table of await page.locator('table').all()) {
        expect(await table.locator('caption').count()).toBe(1);
        expect(await table.locator('thead th[scope="col"]').count()).toBeGreaterThan(0);
      }
      await expect.poll(() => page.getByLabel('From (UTC)').count()).toBe(1);
      // Text against its background (WCAG's contrast ratio, from the computed colours): 4.5:1 at least everywhere.
      const contrasts = await page.evaluate(() => {
        const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
        const lum = ([r, g, b]: number[]) => [r!, g!, b!].map((v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)).reduce((n, v, i) => n + v * [0.2126, 0.7152, 0.0722][i]!, 0);
        const background = (el: Element | null): number[] => {
          for (; el; el = el.parentElement) {
            const c = rgb(getComputedStyle(el).backgroundColor);
            if (c.length === 3 || c[3]! > 0) return c.slice(0, 3);
          }
          return [255, 255, 255];
        };
        const out: { text: string; ratio: number }[] = [];
        for (const el of document.querySelectorAll('h1, h2, p, dt, dd, th, td, caption, a, button, label, summary, small, #live-status')) {
          if (!el.textContent?.trim()) continue;
          const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(background(el))];
          out.push({ text: el.textContent.trim().slice(0, 30), ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) });
        }
        return out;
      });
      expect(contrasts.length).toBeGreaterThan(50);
      expect(contrasts.filter((c) => c.ratio < 4.5)).toEqual([]);
      // Choosing a range is a plain form: days buckets over three days.
      await page.getByLabel('Buckets').selectOption('day');
      await page.getByRole('button', { name: 'Show' }).click();
      await page.waitForURL(/interval=day/);
      expect(await page.textContent('#chart-title')).toBe('Scans per day');
      expect(Number(await page.getAttribute('[data-stat="total"]', 'data-count'))).toBe(total);
    } finally {
      await context.close();
    }
  });

  it('answers 404 for a revoked or expired share', async () => {
    const revoked = await share();
    const expired = await share({ expiresAt: new Date(Date.now() + HOUR).toISOString() });
    await api.delete(`/api/v1/links/${link.id}/analytics/shares/${revoked.id}`);
    // The expiry is Postgres's clock (now()): the stored time is moved to the past instead of waiting an hour.
    await ingress.platform.pg.query("UPDATE link_analytics_shares SET expires_at = now() - interval '1 second' WHERE id = $1", [expired.id]);
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      for (const id of [revoked.id, expired.id]) {
        const res = await page.goto(`${ingress.url}/analytics/${id}`);
        expect(res?.status()).toBe(404);
        expect(await page.textContent('h1')).toBe('Not found');
      }
    } finally {
      await context.close();
    }
  });

  it('signs a workspace in with a key on its own page, lists its links, opens one, and signs out', async () => {
    const reader = await api.post('/api/v1/keys', { name: 'page reader', scopes: ['analytics:read'] });
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${ingress.url}/analytics`);
      expect(await page.textContent('h1')).toBe('Workspace analytics');
      await page.getByLabel('API key').fill(reader.body.key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForSelector('table[data-dim="link"]');
      const listed = await page.locator('table[data-dim="link"] tbody tr').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.value));
      expect(listed).toContain(link.shortId);
      await page.getByRole('link', { name: link.shortId, exact: true }).click();
      await page.waitForURL((url) => url.searchParams.get('link') === link.shortId);
      expect(await page.textContent('h1')).toBe(`Analytics of ${link.shortId}`);
      expect(Number(await page.getAttribute('[data-stat="total"]', 'data-count'))).toBeGreaterThanOrEqual(history);
      await page.waitForFunction(() => document.getElementById('live-status')?.textContent === 'Live', undefined, { timeout: 10_000 });
      await page.getByRole('link', { name: 'All links' }).click();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForSelector('input[name="key"]');
    } finally {
      await context.close();
    }
  });

  it('asks for a share\'s password, refuses a wrong one, and shows the page for the right one', async () => {
    const { id } = await share({ password: 'tulips in april' });
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${ingress.url}/analytics/${id}`);
      expect(await page.textContent('h1')).toBe('Password required');
      expect(await page.locator('[data-stat="total"]').count()).toBe(0);
      await page.getByLabel('Password').fill('roses in may');
      const [wrong] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Show analytics' }).click()]);
      expect(wrong.status()).toBe(401);
      expect(await page.getByRole('alert').textContent()).toContain('not right');
      await page.getByLabel('Password').fill('tulips in april');
      await page.getByRole('button', { name: 'Show analytics' }).click();
      await page.waitForSelector('[data-stat="total"]');
      expect(Number(await page.getAttribute('[data-stat="total"]', 'data-count'))).toBeGreaterThanOrEqual(history);
      // The live stream opens with the session the password gave.
      await page.waitForFunction(() => document.getElementById('live-status')?.textContent === 'Live', undefined, { timeout: 10_000 });
    } finally {
      await context.close();
    }
  });
});
