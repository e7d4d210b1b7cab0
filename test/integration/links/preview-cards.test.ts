// Preview cards (issue 33, item 5): a link with a title, description or image
// answers link-preview crawlers with Open Graph and Twitter tags instead of the
// redirect, not counted as a scan; everyone else is redirected as before.
// Through the real ingress, the links API and the scans topic.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import type { TestIngress } from '../../support/ingress.ts';
import { ingressWithWorkspace, type ApiClient } from '../../support/links/ingress-with-workspace.ts';
import { readTopic } from '../../support/topic-reader.ts';
import { scan } from '../../support/links/scans.ts';

const FETCHERS = {
  facebook: 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  twitter: 'Twitterbot/1.0',
  slack: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  linkedin: 'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
  whatsapp: 'WhatsApp/2.23.20.0 A',
  discord: 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
  telegram: 'TelegramBot (like TwitterBot)',
};

let ingress: TestIngress;
let api: ApiClient;

beforeAll(async () => ({ ingress, api } = await ingressWithWorkspace()), 180_000);

afterAll(async () => {
  await ingress?.close();
});

describe('preview cards', () => {
  it('are fields of a link: set, answered, changed, cleared, in bulk too; bad ones are refused with a stable code', async () => {
    const created = await api.post('/api/v1/links', { destination: 'https://example.com/card', title: 'Spring menu', description: 'Our new dishes', image: 'https://cdn.example.com/menu.png' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ title: 'Spring menu', description: 'Our new dishes', image: 'https://cdn.example.com/menu.png', passwordProtected: false });
    const plain = await api.post('/api/v1/links', { destination: 'https://example.com/plain' });
    expect(plain.body).toMatchObject({ title: null, description: null, image: null });
    const changed = await api.patch(`/api/v1/links/${created.body.id}`, { title: 'Summer menu', image: null });
    expect(changed.body).toMatchObject({ title: 'Summer menu', description: 'Our new dishes', image: null });
    // The image may be the link's own public QR code.
    const own = await api.patch(`/api/v1/links/${created.body.id}`, { image: `${created.body.shortUrl}/qr?size=300` });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    for (const [body, code, path] of [
      [{ title: '' }, 'validation_failed', '/title'],
      [{ title: 'x'.repeat(201) }, 'validation_failed', '/title'],
      [{ title: 'a\u0000b' }, 'validation_failed', '/title'],
      [{ description: 'x'.repeat(501) }, 'validation_failed', '/description'],
      [{ image: 'ftp://example.com/a.png' }, 'invalid_url', '/image'],
      [{ image: 'not a url' }, 'validation_failed', '/image'],
      [{ image: 'https://user:pw@example.com/a.png' }, 'invalid_url', '/image'],
      [{ title: 5 }, 'validation_failed', '/title'],
    ] as const) {
      const res = await api.patch(`/api/v1/links/${created.body.id}`, body);
      expect([res.status, res.body.error.code], JSON.stringify(body)).toEqual([400, code]);
      expect(JSON.stringify(res.body.error.details ?? []), JSON.stringify(body)).toContain(path);
    }
    const bulk = await api.post('/api/v1/links/bulk', { operations: [
      { action: 'create', link: { destination: 'https://example.com/b1', title: 'Bulk card' } },
      { action: 'update', id: plain.body.id, changes: { description: 'Now with a card' } },
      { action: 'create', link: { destination: 'https://example.com/b2', image: 'javascript:alert(1)' } },
    ] });
    expect(bulk.body.results.map((r: any) => r.status)).toEqual([201, 200, 400]);
    expect(bulk.body.results[0].link.title).toBe('Bulk card');
    expect(bulk.body.results[1].link.description).toBe('Now with a card');
    expect(bulk.body.results[2].error.code).toBe('invalid_url');
  });

  it('link-preview crawlers get the Open Graph and Twitter tags, HTML-escaped, and no scan; browsers and other bots get the 302', async () => {
    const hostile = '"><script>alert(1)</script>&amp;';
    const link = (await api.post('/api/v1/links', { destination: 'https://example.com/landing?a=1&b=2', title: `Menu ${hostile}`, description: `Fresh ${hostile}`, image: 'https://cdn.example.com/menu.png?w=1200&h=630' })).body;
    for (const [name, userAgent] of Object.entries(FETCHERS)) {
      const res = await scan(ingress.url, link.shortId, { 'user-agent': userAgent });
      expect([res.status, res.location], name).toEqual([200, null]);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.body).toContain(`<meta property="og:title" content="Menu &#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;&#38;amp;">`);
      expect(res.body).toContain('<meta property="og:description" content="Fresh &#34;&#62;&#60;script&#62;');
      expect(res.body).toContain('<meta property="og:image" content="https://cdn.example.com/menu.png?w=1200&#38;h=630">');
      expect(res.body).toContain('<meta name="twitter:card" content="summary_large_image">');
      expect(res.body).toContain('<meta name="twitter:title" content="Menu &#34;');
      expect(res.body).not.toContain('<script>');
    }
    // A browser, curl and a search crawler are redirected and counted.
    const browser = await scan(ingress.url, link.shortId);
    expect(browser.status).toBe(302);
    expect((await scan(ingress.url, link.shortId, { 'user-agent': 'curl/8.5.0' })).status).toBe(302);
    expect((await scan(ingress.url, link.shortId, { 'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' })).status).toBe(302);
    // A link without a card redirects the crawlers.
    const plain = (await api.post('/api/v1/links', { destination: 'https://example.com/no-card' })).body;
    expect((await scan(ingress.url, plain.shortId, { 'user-agent': FETCHERS.slack })).status).toBe(302);

    const messages = await readTopic<ScanEvent>(ingress.platform.config, 'scans', (m) => m.filter((x) => x.value.linkId === link.id).length >= 3);
    await new Promise((r) => setTimeout(r, 1000));
    const scans = messages.filter((m) => m.value.linkId === link.id).map((m) => m.value.userAgent);
    expect(scans).toHaveLength(3);
    expect(scans.some((ua) => Object.values(FETCHERS).includes(ua ?? ''))).toBe(false);
  });
});
