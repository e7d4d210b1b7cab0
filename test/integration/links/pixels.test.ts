// Links with retargeting pixels over plain HTTP: a browser gets the small page
// that fires them and sends it on (recording the scan as a 302 does); crawlers,
// non-browser clients, HEAD and links without pixels keep the plain 302; pixel
// IDs are checked against each provider's form.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClickIds } from '../../../src/links/scans/click-id.ts';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { freshIp, type TestIngress } from '../../support/ingress.ts';
import { createdLink, ingressWithWorkspace, type ApiClient } from '../../support/links/ingress-with-workspace.ts';
import { DESKTOP_UA, scan } from '../../support/links/scans.ts';
import { eventually } from '../../support/env.ts';
import { readTopic } from '../../support/topic-reader.ts';

// What a browser sends when it follows a link.
const BROWSER = { 'user-agent': DESKTOP_UA, accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const ALL_PIXELS = [
  { provider: 'meta', pixelId: '1234567890123456' },
  { provider: 'google', pixelId: 'AW-123456789' },
  { provider: 'tiktok', pixelId: 'C4A1B2C3D4E5F6G7H8I9' },
  { provider: 'linkedin', pixelId: '1234567' },
  { provider: 'x', pixelId: 'o1a2b' },
  { provider: 'pinterest', pixelId: '2612345678901' },
  { provider: 'snapchat', pixelId: '9f1c2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f' },
  { provider: 'reddit', pixelId: 'a2_abc123' },
];
// Each provider's script (or beacon) host, as its documented snippet loads it.
const HOSTS = ['connect.facebook.net', 'www.googletagmanager.com', 'analytics.tiktok.com', 'snap.licdn.com', 'static.ads-twitter.com', 's.pinimg.com', 'sc-static.net', 'www.redditstatic.com'];

let ingress: TestIngress;
let api: ApiClient;
let workspaceId: string;

beforeAll(async () => ({ ingress, api, workspaceId } = await ingressWithWorkspace()));
afterAll(async () => {
  await ingress?.close();
});

/** A new link, once this ingress's cache has it. */
async function createLink(body: Record<string, unknown>) {
  const link = await createdLink(api, body);
  await eventually(async () => ingress.app.redirects.cache.get(link.shortId) !== undefined, 5000, 20);
  return link;
}

describe('links with pixels', () => {
  it('answer a browser with a page that fires every pixel and redirects, recording the scan as a 302 does', async () => {
    const link = await createLink({ destination: 'https://example.com/pixel?x=1#top', pixels: ALL_PIXELS });
    const res = await scan(ingress.url, link.shortId, BROWSER);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect(res.location).toBeNull();
    for (const host of HOSTS) expect(res.body).toContain(`https://${host}/`);
    for (const { pixelId } of ALL_PIXELS) expect(res.body).toContain(pixelId);

    // The destination carries a verifiable click ID, in the meta refresh and the script alike.
    const refresh = /<meta http-equiv="refresh" content="1;url=([^"]+)">/.exec(res.body);
    expect(refresh).toBeTruthy();
    const destination = refresh![1]!.replace(/&#38;/g, '&');
    const cid = /^https:\/\/example\.com\/pixel\?x=1&svc_cid=([A-Za-z0-9_-]{84})#top$/.exec(destination)?.[1];
    expect(cid, destination).toBeTruthy();
    expect(res.body).toContain(`location.replace(${JSON.stringify(destination).replace(/&/g, '\\u0026')})`);
    expect(new ClickIds(ingress.platform.config.CLICK_ID_SECRET).verify(cid!)).toMatchObject({ linkId: link.id, workspaceId });
    // The redirect is scheduled before any provider's script.
    expect(res.body.indexOf('location.replace')).toBeLessThan(res.body.indexOf('connect.facebook.net'));

    const messages = await readTopic<ScanEvent>(ingress.platform.config, 'scans', (m) => m.some((x) => x.value.linkId === link.id));
    const event = messages.find((m) => m.value.linkId === link.id)!.value;
    expect(event).toMatchObject({ clickId: cid, linkId: link.id, shortId: link.shortId, destination: 'https://example.com/pixel?x=1#top', isBot: false });
  });

  it('keep the plain 302 for crawlers, non-browser clients, HEAD and links without pixels', async () => {
    const withPixels = await createLink({ destination: 'https://example.com/p', pixels: [{ provider: 'meta', pixelId: '42' }] });
    const without = await createLink({ destination: 'https://example.com/plain' });

    const plain = await scan(ingress.url, without.shortId, BROWSER);
    expect(plain.status).toBe(302);
    expect(plain.location).toMatch(/^https:\/\/example\.com\/plain\?svc_cid=/);

    for (const bot of ['Googlebot/2.1 (+http://www.google.com/bot.html)', 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)', 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)']) {
      const res = await scan(ingress.url, withPixels.shortId, { ...BROWSER, 'user-agent': bot });
      expect(res.status, bot).toBe(302);
      expect(res.location).toMatch(/^https:\/\/example\.com\/p\?svc_cid=/);
    }
    // A client that does not ask for HTML (curl sends Accept: */*) is sent on directly.
    const curl = await scan(ingress.url, withPixels.shortId, { 'user-agent': 'curl/8.5.0', accept: '*/*' });
    expect(curl.status).toBe(302);

    const head = await fetch(`${ingress.url}/${withPixels.shortId}`, { method: 'HEAD', redirect: 'manual', headers: { ...BROWSER, 'x-forwarded-for': freshIp() } });
    expect(head.status).toBe(302);
  });

  it("refuses pixel IDs that are not of their provider's form, and hostile ones", async () => {
    for (const pixelId of ['"><script>alert(1)</script>', "1');alert(1);//", '</script>']) {
      const res = await api.post('/api/v1/links', { destination: 'https://example.com/', pixels: [{ provider: 'meta', pixelId }] });
      expect(res.status, pixelId).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
    const cases: [string, string][] = [['meta', 'abc'], ['google', '123'], ['tiktok', 'lower-case'], ['snapchat', '1234'], ['reddit', 'nounderscore'], ['x', 'A.B']];
    for (const [provider, pixelId] of cases) {
      const res = await api.post('/api/v1/links', { destination: 'https://example.com/', pixels: [{ provider, pixelId }] });
      expect(res.status, `${provider} ${pixelId}`).toBe(400);
      expect(res.body.error.code).toBe('invalid_pixel_id');
      expect(res.body.error.details[0].path).toBe('/pixels/0/pixelId');
    }
    const link = await createLink({ destination: 'https://example.com/' });
    const patched = await api.patch(`/api/v1/links/${link.id}`, { pixels: [{ provider: 'linkedin', pixelId: 'G-1' }] });
    expect(patched.status).toBe(400);
    expect(patched.body.error.code).toBe('invalid_pixel_id');
  });
});
