// Inputs that once reached Postgres or ClickHouse and came back as 500s: each
// must now be a 4xx with the error body, and change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, client, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

let ingress: TestIngress;
let api: ReturnType<typeof client>;
let key: string;
let linkId: string;
let campaignId: string;

const URN = 'urn:uuid:00000000-0000-0000-0000-000000000000';
const cursor = (c: object) => Buffer.from(JSON.stringify(c)).toString('base64url');
const ZERO = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  ({ key } = await workspaceWithKey(ingress.url));
  api = client(ingress.url, key);
  linkId = (await api.post('/api/v1/links', { destination: 'https://example.com/keep' })).body.id;
  campaignId = (await api.post('/api/v1/campaigns', { name: 'Keep' })).body.id;
});
afterAll(async () => {
  await ingress?.close();
});

describe('inputs that must be refused with a 4xx, never a 5xx', () => {
  const cases: [string, string, string, unknown?][] = [
    ['NUL in search', 'GET', '/api/v1/links?q=a%00b'],
    ['NUL in campaign name', 'POST', '/api/v1/campaigns', { name: 'a\u0000b' }],
    ['NUL in campaign description', 'POST', '/api/v1/campaigns', { name: 'ok nul', description: 'x\u0000' }],
    ['NUL in destination', 'POST', '/api/v1/links', { destination: 'https://example.com/a\u0000b' }],
    ['NUL in iosUrl', 'POST', '/api/v1/links', { destination: 'https://example.com/', iosUrl: 'https://e.com/\u0000' }],
    ['NUL in analytics tag', 'GET', '/api/v1/analytics?tag=%00'],
    ['urn:uuid campaign filter', 'GET', `/api/v1/links?campaignId=${URN}`],
    ['urn:uuid campaign on create', 'POST', '/api/v1/links', { destination: 'https://example.com/', campaignId: URN }],
    ['urn:uuid analytics link', 'GET', `/api/v1/analytics?linkId=${URN}`],
    ['urn:uuid export link', 'GET', `/api/v1/analytics/export?linkId=${URN}`],
    ['offset +20:00', 'POST', '/api/v1/links', { destination: 'https://example.com/', expiresAt: '2030-01-01T00:00:00+20:00' }],
    ['offset -16:00', 'POST', '/api/v1/links', { destination: 'https://example.com/', expiresAt: '2030-01-01T00:00:00-16:00' }],
    ['year 10000', 'POST', '/api/v1/links', { destination: 'https://example.com/', expiresAt: '+010000-01-01T00:00:00Z' }],
    ['cursor value "1"', 'GET', `/api/v1/links?cursor=${cursor({ sort: 'createdAt', order: 'desc', value: '1', id: ZERO })}`],
    ['cursor far future', 'GET', `/api/v1/links?cursor=${cursor({ sort: 'createdAt', order: 'desc', value: '+275760-09-13T00:00:00.000Z', id: ZERO })}`],
    ['cursor dashes id', 'GET', `/api/v1/links?cursor=${cursor({ sort: 'createdAt', order: 'desc', value: '2026-01-01T00:00:00Z', id: '------------------------------------' })}`],
    ['cursor NUL short id', 'GET', `/api/v1/links?sort=shortId&cursor=${cursor({ sort: 'shortId', order: 'asc', value: 'a\u0000', id: ZERO })}`],
    ['campaign cursor "March 7"', 'GET', `/api/v1/campaigns?cursor=${cursor({ sort: 'createdAt', order: 'desc', value: 'March 7', id: ZERO })}`],
    ['blank campaign name', 'POST', '/api/v1/campaigns', { name: '   ' }],
    ['analytics in 1960', 'GET', '/api/v1/analytics?from=1960-01-01T00:00:00Z&to=1960-02-01T00:00:00Z'],
    ['analytics in 2200', 'GET', '/api/v1/analytics?from=2200-01-01T00:00:00Z&to=2200-02-01T00:00:00Z'],
    ['export in 1900', 'GET', '/api/v1/analytics/export?from=1900-01-01T00:00:00Z&to=1900-01-02T00:00:00Z'],
    ['bad URL escape', 'GET', '/api/v1/links/%ZZ'],
    ['CRLF in destination', 'POST', '/api/v1/links', { destination: 'https://e.com/a\r\nSet-Cookie: x=1' }],
    ['space in destination', 'POST', '/api/v1/links', { destination: ' https://example.com/' }],
    ['self-referencing destination', 'POST', '/api/v1/links', { destination: 'http://127.0.0.1:3000/abc' }],
    ['NUL in track event', 'POST', '/api/v1/track', { clickId: 'A'.repeat(84), event: 'a\u0000' }],
    ['NUL in track externalId', 'POST', '/api/v1/track', { clickId: 'A'.repeat(84), externalId: 'a\u0000' }],
    ['NUL in track metadata', 'POST', '/api/v1/track', { clickId: 'A'.repeat(84), metadata: { k: 'a\u0000' } }],
    ['NaN-ish track amount', 'POST', '/api/v1/track', { clickId: 'A'.repeat(84), amount: '1e400', currency: 'EUR' }],
    ['huge track amount', 'POST', '/api/v1/track', { clickId: 'A'.repeat(84), amount: 1e300, currency: 'EUR' }],
    ['track body an array', 'POST', '/api/v1/track', [1, 2]],
    ['urn:uuid funnel link', 'GET', `/api/v1/analytics/funnel?linkId=${URN}`],
    ['funnel in 1900', 'GET', '/api/v1/analytics/funnel?from=1900-01-01T00:00:00Z&to=1900-01-02T00:00:00Z'],
    ['NUL in webhook URL', 'POST', '/api/v1/webhooks', { url: 'https://hooks.example.com/\u0000' }],
    ['NUL in webhook description', 'POST', '/api/v1/webhooks', { url: 'https://hooks.example.com/', description: 'a\u0000' }],
    ['webhook URL with CRLF', 'POST', '/api/v1/webhooks', { url: 'https://hooks.example.com/\r\nx: y' }],
    ['urn:uuid webhook id', 'GET', `/api/v1/webhooks/${URN}`],
    ['urn:uuid delivery id', 'GET', `/api/v1/webhooks/${ZERO}/deliveries/${URN}`],
    ['delivery cursor garbage', 'GET', `/api/v1/webhooks/${ZERO}/deliveries?cursor=${cursor({ sort: 'createdAt', order: 'desc', value: 'March 7', id: ZERO })}`],
    ['delivery state unknown', 'GET', `/api/v1/webhooks/${ZERO}/deliveries?state=lost`],
  ];

  it.each(cases)('%s', async (_name, method, path, body) => {
    const res = await call(ingress.url, method, path, { key, body });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(typeof res.body.error.code).toBe('string');
  });

  it('refuses bad values in PATCH without changing the link or campaign', async () => {
    const before = (await api.get(`/api/v1/links/${linkId}`)).body;
    for (const body of [{ destination: 'https://e.com/\u0000' }, { campaignId: URN }, { expiresAt: '2030-01-01T00:00:00+16:00' }]) {
      const res = await api.patch(`/api/v1/links/${linkId}`, body);
      expect(res.status).toBe(400);
    }
    expect((await api.get(`/api/v1/links/${linkId}`)).body).toEqual(before);
    for (const body of [{ name: '  ' }, { description: 'a\u0000' }]) {
      expect((await api.patch(`/api/v1/campaigns/${campaignId}`, body)).status).toBe(400);
    }
    expect((await api.get(`/api/v1/campaigns/${campaignId}`)).body.name).toBe('Keep');
  });

  it('reports a bad bulk operation on its own and keeps the others', async () => {
    const res = await api.post('/api/v1/links/bulk', {
      operations: [
        { action: 'create', link: { destination: 'https://e.com/ok' } },
        { action: 'create', link: { destination: 'https://e.com/ok2', campaignId: URN } },
        { action: 'create', link: { destination: 'https://e.com/ok3', expiresAt: '2030-01-01T00:00:00+20:00' } },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: any) => r.status)).toEqual([201, 400, 400]);
  });

  it('treats a NUL character anywhere in a bulk body as a malformed request and applies nothing', async () => {
    const tag = `nul${Date.now()}`;
    const res = await api.post('/api/v1/links/bulk', {
      operations: [
        { action: 'create', link: { destination: 'https://e.com/ok', tags: [tag] } },
        { action: 'create', link: { destination: 'https://e.com/\u0000', tags: [tag] } },
      ],
    });
    expect(res.status).toBe(400);
    expect((await api.get(`/api/v1/links?tag=${tag}`)).body.data).toHaveLength(0);
  });

  it('refuses admin names that are blank or hold NUL', async () => {
    const admin = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
    expect((await call(ingress.url, 'POST', '/admin/v1/workspaces', { ...admin, body: { name: 'a\u0000', plan: 'free' } })).status).toBe(400);
    expect((await call(ingress.url, 'POST', '/admin/v1/workspaces', { ...admin, body: { name: '   ', plan: 'free' } })).status).toBe(400);
  });
});

describe('authentication under concurrency', () => {
  it('lets no more than 10 failed attempts from one IP reach the key check, even all at once', async () => {
    const ip = freshIp();
    const { key: valid } = await workspaceWithKey(ingress.url);
    const bad = Array.from({ length: 60 }, () => call(ingress.url, 'GET', '/api/v1/links', { key: `lk_live_${'y'.repeat(32)}`, ip }));
    const results = await Promise.all([...bad, call(ingress.url, 'GET', '/api/v1/links', { key: valid, ip })]);
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(50);
    expect(statuses.filter((s) => s >= 500)).toHaveLength(0);
  });

  it('limits guesses of the admin token per IP too', async () => {
    const ip = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await call(ingress.url, 'GET', '/admin/v1/workspaces', { ip, headers: { authorization: `Bearer guess-${i}-xxxxxxxxxxxxxxxx` } })).status);
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
  });
});

describe('API conveniences', () => {
  it('serves the list with a trailing slash, finds a link by short ID, and deletes idempotently', async () => {
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/slash', shortId: `slash-${Date.now()}` });
    expect((await api.get('/api/v1/links/')).status).toBe(200);
    const found = await api.get(`/api/v1/links?shortId=${link.shortId}`);
    expect(found.body.data.map((l: any) => l.id)).toEqual([link.id]);
    const first = await api.delete(`/api/v1/links/${link.id}`);
    const second = await call(ingress.url, 'DELETE', `/api/v1/links/${link.id}`, { key, raw: '', headers: { 'content-type': 'application/json' } });
    expect(second.status).toBe(200);
    expect(second.body.updatedAt).toBe(first.body.updatedAt);
  });

  it('accepts null for optional fields on create, keeps one of identical pixels, and says which values an enum allows', async () => {
    const res = await api.post('/api/v1/links', {
      destination: 'https://example.com/nulls', iosUrl: null, expiresAt: null, scanLimit: null, campaignId: null,
      pixels: [{ provider: 'meta', pixelId: '1' }, { provider: 'meta', pixelId: '1' }],
    });
    expect(res.status).toBe(201);
    expect(res.body.pixels).toEqual([{ provider: 'meta', pixelId: '1' }]);
    const bad = await api.get('/api/v1/links?sort=created_at');
    expect(bad.body.error.message).toContain('createdAt, updatedAt, shortId');
  });

  it('answers unknown /api/v1 routes with 404 and the rate-limit headers', async () => {
    const res = await api.get('/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('route_not_found');
    expect(res.headers.get('x-ratelimit-limit')).toBeTruthy();
  });
});
