// The common redirect is answered before Fastify (front-door.ts, redirect-route.ts's
// redirectBeforeFastify); any request it declines goes through Fastify's route. The two must be
// one service: the same status, headers and scan for the same visit. A percent-escaped short ID
// ("ab%2Dcd" for "ab-cd") is declined by the front door and decoded by Fastify's router, so the
// same link is asked both ways.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';
import { readTopic } from '../../support/topic-reader.ts';
import { scan } from '../../support/links/scans.ts';
import { httpRequests } from '../../../src/platform/metrics/series.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

let ingress: TestIngress;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  ingress = await startIngress();
  const ws = await workspaceWithKey(ingress.url);
  api = client(ingress.url, ws.key);
});
afterAll(async () => {
  await ingress?.close();
});

/** GET /:shortId's 302 answers counted in linkmail_http_requests_total (the in-process ingress counts into this file's registry). */
async function redirectsCounted(): Promise<number> {
  const { values } = await httpRequests.get();
  return values.find((v) => v.labels.method === 'GET' && v.labels.route === '/:shortId' && String(v.labels.status) === '302')?.value ?? 0;
}

describe('the redirect before Fastify', () => {
  it('answers as the Fastify route does: headers, destination, scan and metrics', async () => {
    const shortId = `fd-${Date.now().toString(36)}`;
    const created = await api.post('/api/v1/links', { destination: 'https://example.com/landing?ref=x', shortId, iosUrl: 'https://apps.apple.com/app/id1', utm: { source: 'flyer' } });
    expect(created.status).toBe(201);
    await eventually(async () => ingress.app.redirects.cache.get(shortId) !== undefined, 5000, 20);
    const before = await redirectsCounted();
    const answeredBefore = ingress.app.frontDoor.answered;
    const headers = { 'user-agent': IPHONE, 'x-forwarded-for': '81.2.69.160', referer: 'https://news.example.org/a', 'x-request-id': 'front-door-1' };
    const front = await scan(ingress.url, `${shortId}?qr&a=b`, headers);
    expect(ingress.app.frontDoor.answered).toBe(answeredBefore + 1);
    const routed = await scan(ingress.url, `${shortId.replace('-', '%2D')}?qr&a=b`, { ...headers, 'x-request-id': 'front-door-2' });
    expect(ingress.app.frontDoor.answered).toBe(answeredBefore + 1);

    for (const res of [front, routed]) {
      expect(res.status).toBe(302);
      expect(res.location).toMatch(/^https:\/\/apps\.apple\.com\/app\/id1\?utm_source=flyer&a=b&svc_cid=[A-Za-z0-9_-]{84}$/);
      expect(res.body).toBe('');
    }
    const names = (h: Headers) => [...h.keys()].filter((k) => k !== 'date').sort();
    expect(names(front.headers)).toEqual(names(routed.headers));
    for (const name of names(front.headers).filter((n) => n !== 'location' && n !== 'x-request-id')) {
      expect(front.headers.get(name), name).toBe(routed.headers.get(name));
    }
    expect(front.headers.get('x-request-id')).toBe('front-door-1');
    expect(routed.headers.get('x-request-id')).toBe('front-door-2');

    const messages = await readTopic<ScanEvent>(ingress.platform.config, 'scans', (m) => m.filter((x) => x.value.shortId === shortId).length >= 2);
    const [a, b] = messages.filter((m) => m.value.shortId === shortId).map((m) => m.value);
    const same = ({ scanId: _s, clickId: _c, timestamp: _t, ...rest }: ScanEvent) => rest;
    expect(same(a!)).toEqual(same(b!));
    expect(a).toMatchObject({ country: 'GB', trigger: 'qr', referrerHost: 'news.example.org', destination: 'https://apps.apple.com/app/id1', device: 'mobile' });
    expect(await redirectsCounted()).toBe(before + 2);

    // Without an X-Request-Id of the client's, the request's id is its scan's (a UUID it already
    // has), as the click ID in its Location carries it; a malformed one is replaced the same way.
    for (const given of [undefined, 'bad id!']) {
      const own = await scan(ingress.url, shortId, { 'user-agent': IPHONE, ...(given ? { 'x-request-id': given } : {}) });
      // A click ID's bytes 1-16 are its scan's id (click-id.ts).
      const scanIdHex = Buffer.from(new URL(own.location!).searchParams.get('svc_cid')!, 'base64url').subarray(1, 17).toString('hex');
      expect(own.headers.get('x-request-id')?.replace(/-/g, '')).toBe(scanIdHex);
      expect(own.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  it('leaves to Fastify what it does not answer whole: HEAD, unknown IDs, reserved paths', async () => {
    const shortId = `fe-${Date.now().toString(36)}`;
    expect((await api.post('/api/v1/links', { destination: 'https://example.com/e', shortId })).status).toBe(201);
    await eventually(async () => ingress.app.redirects.cache.get(shortId) !== undefined, 5000, 20);
    const answeredBefore = ingress.app.frontDoor.answered;
    const head = await fetch(`${ingress.url}/${shortId}`, { method: 'HEAD', redirect: 'manual' });
    expect(head.status).toBe(302);
    expect((await scan(ingress.url, 'no-such-link-here')).status).toBe(404);
    expect((await scan(ingress.url, 'healthz')).status).toBe(200);
    expect(ingress.app.frontDoor.answered).toBe(answeredBefore);
    expect((await scan(ingress.url, shortId)).status).toBe(302);
    expect(ingress.app.frontDoor.answered).toBe(answeredBefore + 1);
  });
});
