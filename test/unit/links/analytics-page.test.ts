// The analytics page's pure parts: its range from the query string, the chart's
// scale and markup, escaping of every value that enters the HTML, the CSP hash of
// its script (and that the script is valid JavaScript), and what a live event
// keeps of a scan.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { contentSecurityPolicy, escapeHtml, scriptHash } from '../../../src/platform/http/html-page.ts';
import { PAGE_SCRIPT } from '../../../src/links/analytics-page/page-script.ts';
import { pageRange } from '../../../src/links/analytics-page/page-range.ts';
import { niceMax, timeChart } from '../../../src/links/analytics-page/time-chart.ts';
import { pageScan } from '../../../src/links/analytics-page/page-stream.ts';
import { pageRest, pageStart, type PageFrame } from '../../../src/links/analytics-page/page-html.ts';
import { newShareId, SHARE_ID_PATTERN } from '../../../src/links/analytics-page/share-store.ts';
import { ApiError } from '../../../src/platform/http/errors.ts';
import { InFlight } from '../../../src/links/analytics-page/in-flight.ts';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 11, 6, 7, 20, 0);

describe('the page\'s range', () => {
  it('defaults to the last 7 days up to now, in hours, whole hours in UTC', () => {
    const r = pageRange({}, NOW);
    expect(r).toMatchObject({ preset: '7d', interval: 'hour' });
    expect(r.to.toISOString()).toBe('2026-12-06T08:00:00.000Z');
    expect(r.from.toISOString()).toBe('2026-11-29T07:00:00.000Z');
  });

  it('takes presets, dates (to included) and the interval', () => {
    expect(pageRange({ range: '30d' }, NOW)).toMatchObject({ preset: '30d', interval: 'day' });
    expect(pageRange({ range: '24h', interval: 'day' }, NOW)).toMatchObject({ preset: '24h', interval: 'day' });
    const dates = pageRange({ from: '2026-11-01', to: '2026-11-03' }, NOW);
    expect([dates.from.toISOString(), dates.to.toISOString(), dates.interval, dates.preset]).toEqual(['2026-11-01T00:00:00.000Z', '2026-11-04T00:00:00.000Z', 'hour', undefined]);
    expect(pageRange({ from: '2026-10-01', to: '2026-11-30' }, NOW).interval).toBe('day');
  });

  it('refuses what it cannot show with a stable code', () => {
    const code = (q: Record<string, string>) => {
      try {
        pageRange(q, NOW);
        return 'none';
      } catch (err) {
        return err instanceof ApiError ? `${err.statusCode} ${err.code}` : String(err);
      }
    };
    expect(code({ interval: 'week' })).toBe('400 validation_failed');
    expect(code({ range: 'toString' })).toBe('400 validation_failed');
    expect(code({ range: '__proto__' })).toBe('400 validation_failed');
    expect(code({ from: 'soon' })).toBe('400 validation_failed');
    expect(code({ from: '2026-11-03', to: '2026-11-01' })).toBe('400 invalid_range');
    expect(code({ from: '2020-01-01', to: '2026-01-01' })).toBe('400 invalid_range');
    expect(code({ from: '2026-01-01', to: '2026-03-01', interval: 'hour' })).toBe('400 too_many_buckets');
  });
});

describe('the chart', () => {
  it('rounds its top up to an even number up to 10, then 1, 2, 3, 4, 5, 6 or 8 times a power of ten, its middle line whole', () => {
    const xs = [0, 1, 2, 3, 7, 11, 20, 21, 23, 31, 41, 51, 61, 81, 999, 1001, 7001];
    expect(xs.map(niceMax)).toEqual([1, 1, 2, 4, 8, 20, 20, 30, 30, 40, 50, 60, 80, 100, 1000, 2000, 8000]);
    for (const x of xs.slice(2)) expect(Number.isInteger(niceMax(x) / 2)).toBe(true);
    // The page's script scales as the server does.
    const scriptNiceMax = new Function(`${/const niceMax = [\s\S]*?\n  \};/.exec(PAGE_SCRIPT)![0]} return niceMax;`)() as (n: number) => number;
    expect(xs.map(scriptNiceMax)).toEqual(xs.map(niceMax));
  });

  it('draws one bar a bucket, scaled to the top, with its start and count', () => {
    const svg = timeChart([{ start: 0, scans: 5 }, { start: HOUR, scans: 10 }, { start: 2 * HOUR, scans: 0 }], 'hour', 't');
    const bars = [...svg.matchAll(/<rect class="bar" data-start="(\d+)" data-scans="(\d+)"[^>]* height="([\d.]+)"/g)].map((m) => [Number(m[1]), Number(m[2]), Number(m[3])]);
    expect(bars.map(([s, n]) => [s, n])).toEqual([[0, 5], [HOUR, 10], [2 * HOUR, 0]]);
    expect(bars[1]![2]).toBeCloseTo(2 * bars[0]![2]!, 1);
    expect(bars[2]![2]).toBe(0);
    expect(svg).toContain('role="img" aria-labelledby="t"');
    expect(svg).toContain('Jan 1, 01:00: 10 scans');
  });
});

describe('the page\'s markup', () => {
  it('escapes every value of the scans and the link', () => {
    const evil = `<img src=x onerror=alert(1)>"'&`;
    // As the route sends it: the start at once, the rest when the numbers are read.
    const frame: PageFrame = {
      heading: `Analytics of ${evil}`, subtitle: evil, range: { ...pageRange({}, NOW) }, urlWith: (p) => `?x=${evil}&${new URLSearchParams(p as Record<string, string>).toString()}`, keep: { token: evil },
      streamUrl: `/analytics/stream?token=${evil}`,
    };
    const html = pageStart(frame) + pageRest(frame, {
      totalScans: 1, uniqueVisitors: 1, timeseries: [{ start: NOW, scans: 1 }],
      countries: [{ value: evil, count: 1 }], devices: [{ value: evil, count: 1 }], browsers: [{ value: evil, count: 1 }], referrers: [{ value: evil, count: 1 }],
      variants: [{ value: evil, count: 1 }], triggers: [{ trigger: 'link', scans: 1 }, { trigger: 'qr', scans: 0 }],
    }, { rows: [{ value: evil, label: evil, count: 1 }], href: (v) => `?link=${v}`, more: 0 });
    expect(html).not.toContain('<img');
    expect(html).not.toMatch(/"'&[^a#]/);
    expect(html.match(/&lt;img src=x onerror=alert\(1\)&gt;&quot;&#39;&amp;/g)!.length).toBeGreaterThanOrEqual(10);
    expect(escapeHtml(`<>&"'`)).toBe('&lt;&gt;&amp;&quot;&#39;');
  });

  it('allows its script by the hash of its exact text, and the script is valid JavaScript', () => {
    expect(scriptHash(PAGE_SCRIPT)).toBe(`'sha256-${createHash('sha256').update(PAGE_SCRIPT).digest('base64')}'`);
    expect(contentSecurityPolicy({ scripts: [PAGE_SCRIPT], connectSelf: true })).toBe(`default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; script-src ${scriptHash(PAGE_SCRIPT)}; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`);
    expect(contentSecurityPolicy({})).not.toContain('script-src');
    expect(() => new Function(PAGE_SCRIPT)).not.toThrow();
    expect(PAGE_SCRIPT).not.toContain('innerHTML');
  });
});

describe('a live event of a page', () => {
  const scan = { scanId: 's', clickId: 'secret-click', workspaceId: 'w', linkId: 'l', shortId: 'abc', campaignId: null, timestamp: '2026-12-06T07:00:00.000Z', destination: 'https://secret.example/', variant: null, trigger: 'qr', country: 'DE', region: 'BE', city: 'Berlin', device: 'mobile', os: 'iOS', browser: 'Safari', referrer: 'https://ref.example/secret-path', referrerHost: 'ref.example', utm: {}, isBot: false, userAgent: 'secret-agent', visitorId: 'secret-visitor' };

  it('keeps only what the page counts, and leaves bots out', () => {
    expect(JSON.parse(pageScan(JSON.stringify(scan))!)).toEqual({ t: Date.parse(scan.timestamp), shortId: 'abc', country: 'DE', device: 'mobile', browser: 'Safari', referrer: 'ref.example', variant: null, trigger: 'qr' });
    expect(pageScan(JSON.stringify(scan))).not.toMatch(/secret/);
    expect(pageScan(JSON.stringify({ ...scan, isBot: true }))).toBeUndefined();
  });
});

describe('share ids', () => {
  it('are sh_ and 24 base62 characters, each new', () => {
    const ids = new Set(Array.from({ length: 1000 }, newShareId));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(SHARE_ID_PATTERN);
  });
});

describe('identical page loads at once', () => {
  it('share one read while it runs, and start a new one after it answered or failed', async () => {
    const reads = new InFlight<number>();
    let started = 0;
    let finish!: (n: number) => void;
    const read = () => {
      started++;
      return new Promise<number>((resolve) => (finish = resolve));
    };
    const loads = [reads.get('a', read), reads.get('a', read), reads.get('a', read)];
    const other = reads.get('b', () => Promise.resolve(7));
    expect(started).toBe(1);
    finish(42);
    expect(await Promise.all(loads)).toEqual([42, 42, 42]);
    expect(await other).toBe(7);
    expect(reads.size).toBe(0);
    const failing = reads.get('a', () => Promise.reject(new Error('ClickHouse away')));
    await expect(failing).rejects.toThrow('ClickHouse away');
    expect(reads.size).toBe(0);
    expect(await reads.get('a', () => Promise.resolve(43))).toBe(43);
  });
});
