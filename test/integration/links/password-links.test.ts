// Password-protected links (issue 33, item 4): through the real ingress, the
// links API, Redis (attempts per IP and link) and the scans topic, and in a
// real browser (Debian's chromium, headless, driven by playwright-core): the
// visitor types the password, submits and lands on the destination.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { readTopic } from '../../support/topic-reader.ts';
import { DESKTOP_UA, scan } from '../../support/links/scans.ts';

const CHROMIUM = '/usr/bin/chromium';

let ingress: TestIngress;
let api: ReturnType<typeof client>;
let browser: Browser;
let landing: Server;
let landingUrl: string;
let ipSeq = 0;

beforeAll(async () => {
  landing = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<title>landed</title><p id="path">${req.url}</p>`));
  await new Promise<void>((resolve) => landing.listen(0, '127.0.0.1', resolve));
  landingUrl = `http://127.0.0.1:${(landing.address() as AddressInfo).port}`;
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  api = client(ingress.url, (await workspaceWithKey(ingress.url)).key);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await ingress?.close();
  await new Promise((resolve) => landing?.close(resolve));
});

/** Posts the form as a browser would, from its own client IP unless one is given. */
async function post(shortId: string, body: string, ip = `198.51.100.${++ipSeq}`, headers: Record<string, string> = {}) {
  const res = await fetch(`${ingress.url}/${shortId}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': DESKTOP_UA, accept: 'text/html', 'x-forwarded-for': ip, ...headers },
    body,
  });
  return { status: res.status, location: res.headers.get('location'), headers: res.headers, body: await res.text() };
}

describe('password-protected links', () => {
  it('take a password that is never answered (passwordProtected instead), changed, removed, in bulk too', async () => {
    const created = await api.post('/api/v1/links', { destination: 'https://example.com/secret', password: 'open sesame' });
    expect(created.status).toBe(201);
    expect(created.body.passwordProtected).toBe(true);
    expect(JSON.stringify(created.body)).not.toContain('sesame');
    expect(created.body.password).toBeUndefined();
    const got = await api.get(`/api/v1/links/${created.body.id}`);
    expect(got.body.passwordProtected).toBe(true);
    expect(JSON.stringify(got.body)).not.toMatch(/sesame|scrypt/);
    const listed = await api.get(`/api/v1/links?shortId=${created.body.shortId}`);
    expect(JSON.stringify(listed.body)).not.toMatch(/sesame|scrypt/);
    for (const [body, code] of [[{ password: 'abc' }, 'validation_failed'], [{ password: 'x'.repeat(129) }, 'validation_failed'], [{ password: 1234 }, 'validation_failed']] as const) {
      const res = await api.patch(`/api/v1/links/${created.body.id}`, body);
      expect([res.status, res.body.error.code], JSON.stringify(body)).toEqual([400, code]);
    }
    expect((await api.patch(`/api/v1/links/${created.body.id}`, { password: null })).body.passwordProtected).toBe(false);
    expect((await scan(ingress.url, created.body.shortId)).status).toBe(302);
    const bulk = await api.post('/api/v1/links/bulk', { operations: [
      { action: 'create', link: { destination: 'https://example.com/bulk-secret', password: 'bulk pass' } },
      { action: 'update', id: created.body.id, changes: { password: 'again pass' } },
    ] });
    expect(bulk.body.results.map((r: any) => [r.status, r.link.passwordProtected])).toEqual([[201, true], [200, true]]);
    expect(JSON.stringify(bulk.body)).not.toMatch(/pass"|scrypt/);
  });

  it('answer a form that reveals nothing of the destination; a wrong password gets it again (401), the right one redirects and records the scan then', async () => {
    const link = (await api.post('/api/v1/links', { destination: 'https://secret.example.com/hidden-path?x=1', password: 'correct horse' })).body;
    const form = await scan(ingress.url, link.shortId, { accept: 'text/html' });
    expect([form.status, form.location]).toEqual([200, null]);
    expect(form.headers.get('cache-control')).toContain('no-store');
    expect(form.body).toContain('<form method="post">');
    expect(form.body).toContain('name="password" type="password"');
    expect(form.body).not.toMatch(/secret\.example|hidden-path/);
    // HEAD does not tell where the link goes either; JSON clients get 401 password_required.
    const head = await fetch(`${ingress.url}/${link.shortId}`, { method: 'HEAD', redirect: 'manual' });
    expect([head.status, head.headers.get('location')]).toEqual([200, null]);
    const json = await scan(ingress.url, link.shortId, { accept: 'application/json' });
    expect([json.status, JSON.parse(json.body).error.code]).toEqual([401, 'password_required']);

    const wrong = await post(link.shortId, 'password=correct+pony');
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('That password is not right');
    expect(wrong.body).not.toMatch(/secret\.example|hidden-path/);
    expect((await post(link.shortId, 'password=')).status).toBe(400);
    expect((await post(link.shortId, 'other=1')).status).toBe(400);
    const wrongJson = await post(link.shortId, 'password=nope', undefined, { accept: 'application/json' });
    expect([wrongJson.status, JSON.parse(wrongJson.body).error.code]).toEqual([401, 'password_incorrect']);

    const right = await post(`${link.shortId}?utm_source=poster`, 'password=correct+horse');
    expect(right.status).toBe(302);
    // The short URL's query goes on to the destination (forwardQuery), as for GET.
    expect(right.location).toMatch(/^https:\/\/secret\.example\.com\/hidden-path\?x=1&utm_source=poster&svc_cid=/);
    // JSON works too.
    const rightJson = await fetch(`${ingress.url}/${link.shortId}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.250' }, body: JSON.stringify({ password: 'correct horse' }) });
    expect(rightJson.status).toBe(302);

    // Only the two right passwords were scans.
    const messages = await readTopic<ScanEvent>(ingress.platform.config, 'scans', (m) => m.filter((x) => x.value.linkId === link.id).length >= 2);
    await new Promise((r) => setTimeout(r, 1000));
    const scans = messages.filter((m) => m.value.linkId === link.id);
    expect(scans).toHaveLength(2);
    expect(scans.some((m) => m.value.utmSource === 'poster')).toBe(true);
  });

  it('limits attempts per client IP and link: the 11th in 15 minutes is refused (429) even when right; other IPs and links are not', async () => {
    const link = (await api.post('/api/v1/links', { destination: 'https://example.com/guarded', password: 'the real one' })).body;
    const other = (await api.post('/api/v1/links', { destination: 'https://example.com/guarded-2', password: 'the real one' })).body;
    const ip = '203.0.113.50';
    for (let i = 0; i < 10; i++) expect((await post(link.shortId, `password=guess${i}`, ip)).status).toBe(401);
    const blocked = await post(link.shortId, 'password=the+real+one', ip);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(blocked.body).toContain('Too many attempts');
    expect((await post(link.shortId, 'password=the+real+one', '203.0.113.51')).status).toBe(302);
    expect((await post(other.shortId, 'password=the+real+one', ip)).status).toBe(302);
  });

  it('in a browser: type the password, submit, land on the destination', async () => {
    const link = (await api.post('/api/v1/links', { destination: `${landingUrl}/members?from=qr`, password: 'let me in' })).body;
    const context = await browser.newContext({ userAgent: DESKTOP_UA });
    try {
      const page = await context.newPage();
      await page.goto(`${ingress.url}/${link.shortId}`);
      expect(await page.title()).toBe('Password required');
      await page.fill('input[name=password]', 'wrong one');
      await page.click('button[type=submit]');
      await page.waitForSelector('p.error');
      expect(await page.textContent('p.error')).toContain('not right');
      await page.fill('input[name=password]', 'let me in');
      await Promise.all([page.waitForURL(`${landingUrl}/**`), page.click('button[type=submit]')]);
      expect(await page.title()).toBe('landed');
      expect(await page.textContent('#path')).toMatch(/^\/members\?from=qr&svc_cid=/);
    } finally {
      await context.close();
    }
  });

  it('a crawler gets the preview card of a protected link, never its destination', async () => {
    const link = (await api.post('/api/v1/links', { destination: 'https://secret.example.com/card', password: 'card pass', title: 'Members only' })).body;
    const res = await scan(ingress.url, link.shortId, { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' });
    expect(res.status).toBe(200);
    expect(res.body).toContain('<meta property="og:title" content="Members only">');
    expect(res.body).not.toContain('secret.example.com');
  });
});
