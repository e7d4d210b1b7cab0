// The redirect's fast path (fast-redirect.ts), over real HTTP against the real
// stack: a cached link that simply redirects is answered before Fastify routes
// it, with exactly the route's headers, scan, metrics and per-IP count; every
// other request still reaches the route. A trailing slash makes Fastify's router
// answer the same link (ignoreTrailingSlash), which is how a test asks the route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Counter } from 'prom-client';
import { processRegistry } from '../../../src/platform/metrics/series.ts';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { client, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { scan } from '../../support/links/scans.ts';
import { eventually } from '../../support/env.ts';
import { readTopic } from '../../support/topic-reader.ts';

const REDIRECTS_PER_MINUTE = 6;

let ingress: TestIngress;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', REDIRECTS_PER_MINUTE_PER_IP: String(REDIRECTS_PER_MINUTE) });
  api = client(ingress.url, (await workspaceWithKey(ingress.url)).key);
});
afterAll(async () => {
  await ingress?.close();
});

async function createLink(body: Record<string, unknown>) {
  const res = await api.post('/api/v1/links', body);
  expect(res.status).toBe(201);
  await eventually(async () => ingress.app.redirects.cache.get(res.body.shortId) !== undefined, 5000, 20);
  return res.body as { id: string; shortId: string };
}

/** The value of a series of this process's registry (summed over `labels`' matches). */
async function seriesValue(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = processRegistry.getSingleMetric(name) as Counter | undefined;
  if (!metric) return 0;
  const { values } = await metric.get();
  return values.filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k as never]) === want)).reduce((sum, v) => sum + v.value, 0);
}
const fastAnswers = () => seriesValue('linkmail_http_fast_path_answers_total');

/** The headers of a response, without those that differ by nature (the date, the request id, the click ID in Location). */
function comparable(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name === 'date' || name === 'x-request-id') return;
    out[name] = name === 'location' ? value.replace(/svc_cid=[A-Za-z0-9_-]+/, 'svc_cid=…') : value;
  });
  return out;
}

describe('the redirect fast path', () => {
  it('answers a cached link that simply redirects with the route\'s own headers', async () => {
    const link = await createLink({ destination: 'https://example.com/landing?ref=fast#top' });
    const before = await fastAnswers();
    const fast = await scan(ingress.url, `${link.shortId}?utm_source=news`, { 'x-request-id': 'fast-1' });
    expect(await fastAnswers()).toBe(before + 1);
    const routed = await scan(ingress.url, `${link.shortId}/?utm_source=news`, { 'x-request-id': 'routed-1' });
    expect(await fastAnswers(), 'a trailing slash goes through the router').toBe(before + 1);

    expect(fast.status).toBe(302);
    expect(routed.status).toBe(302);
    expect(comparable(fast.headers)).toEqual(comparable(routed.headers));
    expect(comparable(fast.headers)).toMatchObject({
      location: 'https://example.com/landing?ref=fast&utm_source=news&svc_cid=…#top',
      'cache-control': 'private, no-store, max-age=0',
      'referrer-policy': 'no-referrer-when-downgrade',
      'content-length': '0',
    });
    expect(fast.headers.get('x-request-id')).toBe('fast-1');
    // A malformed request id is replaced, as the route does.
    const replaced = await scan(ingress.url, link.shortId, { 'x-request-id': 'not a valid id!' });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(fast.clickId).not.toBe(routed.clickId);
  });

  it('records the scan, with the client address the trusted proxy gave, and counts the request', async () => {
    const link = await createLink({ destination: 'https://example.com/recorded' });
    const route = { method: 'GET', route: '/:shortId', status: '302' };
    const requestsBefore = await seriesValue('linkmail_http_requests_total', route);
    const before = await fastAnswers();
    // A London address (the IP database's test range) forwarded by the trusted loopback proxy.
    const res = await scan(ingress.url, `${link.shortId}?utm_campaign=spring`, { 'x-forwarded-for': '81.2.69.160', referer: 'https://news.example.org/a' });
    expect(res.status).toBe(302);
    expect(await fastAnswers()).toBe(before + 1);
    expect(await seriesValue('linkmail_http_requests_total', route)).toBe(requestsBefore + 1);

    const messages = await readTopic<ScanEvent>(ingress.platform.config, 'scans', (m) => m.some((x) => x.value.linkId === link.id));
    const events = messages.filter((m) => m.value.linkId === link.id).map((m) => m.value);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      clickId: decodeURIComponent(res.clickId!), shortId: link.shortId, destination: 'https://example.com/recorded',
      country: 'GB', city: 'London', utmCampaign: 'spring', referrerHost: 'news.example.org',
    });
  });

  it('leaves everything else to the route: HEAD, refusals, limits, pages, unknown hosts and paths', async () => {
    const plain = await createLink({ destination: 'https://example.com/plain' });
    const inactive = await createLink({ destination: 'https://example.com/off' });
    expect((await api.patch(`/api/v1/links/${inactive.id}`, { isActive: false })).status).toBe(200);
    const limited = await createLink({ destination: 'https://example.com/limited', scanLimit: 5 });
    const locked = await createLink({ destination: 'https://example.com/locked', password: 'open sesame' });
    await eventually(async () => ingress.app.redirects.cache.get(inactive.shortId)?.isActive === false, 5000, 20);
    const before = await fastAnswers();

    const head = await fetch(`${ingress.url}/${plain.shortId}`, { method: 'HEAD', redirect: 'manual', headers: { 'x-forwarded-for': freshIp() } });
    expect(head.status).toBe(302);
    expect(head.headers.get('location')).toBe('https://example.com/plain');
    expect((await scan(ingress.url, 'noSuchLink1')).status).toBe(404);
    expect((await scan(ingress.url, inactive.shortId)).status).toBe(410);
    expect((await scan(ingress.url, limited.shortId)).status).toBe(302);
    expect((await scan(ingress.url, locked.shortId, { accept: 'text/html' })).status).toBe(200);
    expect((await scan(ingress.url, plain.shortId, { 'x-forwarded-host': 'not-ours.example' })).status).toBe(404);
    expect((await scan(ingress.url, 'healthz')).status).toBe(200);
    expect((await scan(ingress.url, `${plain.shortId}%41`)).status).toBe(404);
    expect(await fastAnswers(), 'none of these was answered before the router').toBe(before);
  });

  it('counts a client\'s redirects once against its per-IP limit, whichever path answers them', async () => {
    const link = await createLink({ destination: 'https://example.com/counted' });
    const ip = freshIp();
    const before = await fastAnswers();
    const statuses: number[] = [];
    for (let i = 0; i < REDIRECTS_PER_MINUTE + 2; i++) {
      const path = i % 2 === 0 ? link.shortId : `${link.shortId}/`;
      statuses.push((await scan(ingress.url, path, { 'x-forwarded-for': ip })).status);
    }
    expect(statuses).toEqual([...Array(REDIRECTS_PER_MINUTE).fill(302), 429, 429]);
    // The fast path answered some of the first six (those the limiter could admit without asking
    // Redis: near so small a limit, the others were Redis's to decide, through the route).
    const fast = (await fastAnswers()) - before;
    expect(fast).toBeGreaterThan(0);
    expect(fast).toBeLessThanOrEqual(REDIRECTS_PER_MINUTE / 2);
    // Another client is not touched by this one's limit, on the fast path.
    expect((await scan(ingress.url, link.shortId)).status).toBe(302);
    expect(await fastAnswers()).toBe(before + fast + 1);
  });
});
