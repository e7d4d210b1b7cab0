// A real browser (Debian's chromium, headless, driven by playwright-core) follows
// a short link with pixels and lands on the destination, a local HTTP server,
// within a short bound even though every pixel provider's script never loads
// (their hosts are unreachable here; the test also holds their requests open).
// A page made with hostile pixel IDs runs none of their text as script.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { pixelPage } from '../../../src/links/redirect/pixel-page.ts';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';
import { DESKTOP_UA } from '../../support/links/scans.ts';

const CHROMIUM = '/usr/bin/chromium';
// The page's script redirects after 500 ms; the rest is a busy 2-core machine's slack.
const LANDING_BOUND_MS = 4000;

let ingress: TestIngress;
let api: ReturnType<typeof client>;
let browser: Browser;
let landing: Server;
let landingUrl: string;
let hostilePage = '';

beforeAll(async () => {
  // The destination: answers every path with a page naming it; /hostile serves a pixel page built with hostile IDs.
  landing = createServer((req, res) => {
    if (req.url === '/hostile') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(hostilePage);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<title>landed</title><p id="path">${req.url}</p>`);
  });
  await new Promise<void>((resolve) => landing.listen(0, '127.0.0.1', resolve));
  landingUrl = `http://127.0.0.1:${(landing.address() as AddressInfo).port}`;
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  api = client(ingress.url, (await workspaceWithKey(ingress.url)).key);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
afterAll(async () => {
  await browser?.close();
  await ingress?.close();
  await new Promise((resolve) => landing?.close(resolve));
});

/** A fresh browser context whose requests to anything but loopback hang until the context closes. */
async function pageWithProvidersHanging() {
  // Headless chromium names itself HeadlessChrome, which is a bot: be the desktop browser of a visitor.
  const context = await browser.newContext({ userAgent: DESKTOP_UA });
  const page = await context.newPage();
  const held: string[] = [];
  await page.route((url) => url.hostname !== '127.0.0.1', (route) => {
    held.push(route.request().url());
  });
  return { context, page, held };
}

describe('pixel page in a browser', () => {
  it('lands on the destination promptly while every pixel script hangs', async () => {
    const res = await api.post('/api/v1/links', {
      destination: `${landingUrl}/welcome?from=qr`,
      pixels: [
        { provider: 'meta', pixelId: '1234567890123456' },
        { provider: 'google', pixelId: 'G-ABC123XYZ' },
        { provider: 'tiktok', pixelId: 'C4A1B2C3D4E5F6G7H8I9' },
        { provider: 'linkedin', pixelId: '1234567' },
        { provider: 'x', pixelId: 'o1a2b' },
        { provider: 'pinterest', pixelId: '2612345678901' },
        { provider: 'snapchat', pixelId: '9f1c2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f' },
        { provider: 'reddit', pixelId: 'a2_abc123' },
      ],
    });
    expect(res.status).toBe(201);
    await eventually(async () => ingress.app.redirects.cache.get(res.body.shortId) !== undefined, 5000, 20);

    const { context, page, held } = await pageWithProvidersHanging();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    try {
      const started = Date.now();
      const first = await page.goto(`${ingress.url}/${res.body.shortId}`, { waitUntil: 'commit' });
      expect(first?.status()).toBe(200);
      await page.waitForURL((url) => url.pathname === '/welcome', { timeout: LANDING_BOUND_MS, waitUntil: 'commit' });
      expect(Date.now() - started).toBeLessThan(LANDING_BOUND_MS);
      expect(page.url()).toMatch(new RegExp(`^${landingUrl}/welcome\\?from=qr&svc_cid=[A-Za-z0-9_-]{84}$`));
      expect(await page.textContent('#path')).toContain('/welcome?from=qr&svc_cid=');
      // Every provider's script was asked for (and never answered).
      for (const host of ['connect.facebook.net', 'www.googletagmanager.com', 'analytics.tiktok.com', 'snap.licdn.com', 'static.ads-twitter.com', 's.pinimg.com', 'sc-static.net', 'www.redditstatic.com']) {
        expect(held.some((url) => new URL(url).hostname === host), `${host} in ${held.join(' ')}`).toBe(true);
      }
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('runs nothing of hostile pixel IDs or destinations and still redirects', async () => {
    const hostile = `</script><script>window.pwned=1</script>"'><img src=x onerror="window.pwned=2">\u2028`;
    hostilePage = pixelPage(`${landingUrl}/after?q=</script><script>window.pwned=3</script>&a="'`, [
      { provider: 'meta', pixelId: hostile },
      { provider: 'google', pixelId: hostile },
      { provider: 'linkedin', pixelId: hostile },
      { provider: 'reddit', pixelId: hostile },
    ]);
    const { context, page } = await pageWithProvidersHanging();
    try {
      await page.goto(`${landingUrl}/hostile`, { waitUntil: 'domcontentloaded' });
      expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
      await page.waitForURL((url) => url.pathname === '/after', { timeout: LANDING_BOUND_MS, waitUntil: 'commit' });
    } finally {
      await context.close();
    }
  });
});
