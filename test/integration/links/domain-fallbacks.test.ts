// A branded domain's root and unknown short IDs (issue 43, item 3), over real HTTP against the
// real stack: PATCH /api/v1/link-domains/:id sets rootUrl and notFoundUrl (only what it names; null
// clears; checked like destinations), GET / and an unknown short ID on the domain redirect there,
// both recorded as orphan visits (journal → `orphan-visits` → sink → ClickHouse) and listed by
// GET /api/v1/analytics/orphan-visits; two workspaces side by side, a domain without settings keeps
// its 404s and records nothing.
import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostWorkers } from '../../../src/platform/actors/host.ts';
import { orphanVisitSinkKind } from '../../../src/links/orphans/orphan-visit-sink.ts';
import { ADMIN_TOKEN, call, client, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { DESKTOP_UA } from '../../support/links/scans.ts';
import { eventually } from '../../support/env.ts';

let ingress: TestIngress;
let stopSink: () => Promise<void>;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  const runtimes = await hostWorkers(ingress.platform, [orphanVisitSinkKind(ingress.platform.clickhouse, ingress.platform.pg)]);
  stopSink = async () => {
    for (const r of runtimes) await r.stop();
  };
}, 180_000);

afterAll(async () => {
  await stopSink?.();
  await ingress?.close();
});

/** GET /<path> with this Host header, following nothing. */
function visit(host: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; location: string | undefined; body: string }> {
  const { port } = new URL(ingress.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, headers: { host, 'user-agent': DESKTOP_UA, 'x-forwarded-for': freshIp(), accept: 'application/json', ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A workspace with a verified domain of its own (verified by the operator). */
async function workspaceWithDomain() {
  const ws = await workspaceWithKey(ingress.url);
  const api = client(ingress.url, ws.key);
  const name = `go-${randomBytes(4).toString('hex')}.example.com`;
  const domain = await api.post('/api/v1/link-domains', { name });
  expect(domain.status).toBe(201);
  expect((await call(ingress.url, 'POST', `/admin/v1/link-domains/${domain.body.id}/verify`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);
  return { ...ws, api, name, id: domain.body.id as string };
}

describe('a branded domain\'s root and unknown short IDs', () => {
  it('are set by PATCH (only what it names, null clears, checked like destinations), redirect, and are listed as orphan visits', async () => {
    const a = await workspaceWithDomain();
    const b = await workspaceWithDomain();
    const patch = (ws: typeof a, body: unknown, id = ws.id) => ws.api.patch(`/api/v1/link-domains/${id}`, body);

    // Bad input: a clear 4xx with a stable code, and nothing changes.
    for (const [body, status, code] of [
      [{ rootUrl: 'ftp://acme.example.com/' }, 400, 'invalid_url'],
      [{ notFoundUrl: 'not a url' }, 400, 'invalid_url'],
      [{ rootUrl: `https://${a.name}/home` }, 400, 'invalid_url'], // would redirect into the service
      [{ notFoundUrl: `https://${b.name}/x` }, 400, 'invalid_url'], // another workspace's domain too
      [{ rootUrl: 'https://user:pw@acme.example.com/' }, 400, 'invalid_url'],
      [{ rootUrl: 5 }, 400, 'validation_failed'],
      [{ rootUrl: '' }, 400, 'validation_failed'],
      [{}, 400, 'validation_failed'],
      [{ rootUrl: 'https://acme.example.com/', extra: 1 }, 400, 'unknown_field'],
    ] as const) {
      const res = await patch(a, body);
      expect([res.status, res.body.error?.code], JSON.stringify(body)).toEqual([status, code]);
    }
    expect((await patch(a, { rootUrl: 'https://acme.example.com/' }, b.id)).status).toBe(404); // another workspace's domain
    expect((await patch(a, { rootUrl: 'https://acme.example.com/' }, 'nope')).status).toBe(404);
    expect((await a.api.get(`/api/v1/link-domains/${a.id}`)).body).toMatchObject({ rootUrl: null, notFoundUrl: null, isDefault: false });
    expect((await b.api.get(`/api/v1/link-domains/${b.id}`)).body).toMatchObject({ rootUrl: null, notFoundUrl: null });

    // Set both; then a PATCH naming only isDefault keeps them.
    const set = await patch(a, { rootUrl: 'https://acme.example.com/', notFoundUrl: 'https://acme.example.com/missing?from=short' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ rootUrl: 'https://acme.example.com/', notFoundUrl: 'https://acme.example.com/missing?from=short' });
    expect((await patch(a, { isDefault: true })).body).toMatchObject({ isDefault: true, rootUrl: 'https://acme.example.com/', notFoundUrl: 'https://acme.example.com/missing?from=short' });
    const link = await a.api.post('/api/v1/links', { destination: 'https://example.com/menu', domain: a.name, shortId: 'menu' });
    expect(link.status).toBe(201);

    // The domain with settings: its root and an unknown short ID go there (no click ID); its link as ever.
    const root = await visit(a.name, '/', { referer: 'https://news.example.org/story' });
    expect([root.status, root.location]).toEqual([302, 'https://acme.example.com/']);
    const unknown = await visit(a.name, '/gone?utm_source=flyer');
    expect([unknown.status, unknown.location]).toEqual([302, 'https://acme.example.com/missing?from=short']);
    expect(await visit(a.name, '/menu')).toMatchObject({ status: 302, location: expect.stringMatching(/^https:\/\/example\.com\/menu\?svc_cid=/) });
    // HEAD learns where it goes and is no visit.
    expect(await visit(a.name, '/', {}, 'HEAD')).toMatchObject({ status: 302, location: 'https://acme.example.com/' });

    // The domain without settings, and the base domain: today's 404s.
    const plainRoot = await visit(b.name, '/');
    expect([plainRoot.status, JSON.parse(plainRoot.body).error.code]).toEqual([404, 'route_not_found']);
    const plainUnknown = await visit(b.name, '/gone');
    expect([plainUnknown.status, JSON.parse(plainUnknown.body).error.code]).toEqual([404, 'not_found']);
    expect((await visit(new URL(ingress.url).host, '/')).status).toBe(404);

    // Listed, newest first, a page at a time; only the workspace's own.
    const listed = await eventually(async () => {
      const res = await a.api.get('/api/v1/analytics/orphan-visits');
      return res.body.data?.length === 2 ? res.body : undefined;
    }, 30_000);
    expect(listed.data.map((v: { type: string }) => v.type).sort()).toEqual(['base_url', 'invalid_short_url']);
    const baseVisit = listed.data.find((v: { type: string }) => v.type === 'base_url');
    expect(baseVisit).toMatchObject({ domain: a.name, path: '/', device: 'desktop', referrerHost: 'news.example.org' });
    expect(listed.data.find((v: { type: string }) => v.type === 'invalid_short_url')).toMatchObject({ domain: a.name, path: '/gone', referrerHost: null });
    expect(Date.parse(baseVisit.timestamp)).toBeGreaterThan(Date.now() - 120_000);
    const first = await a.api.get('/api/v1/analytics/orphan-visits?limit=1');
    expect(first.body.data).toHaveLength(1);
    const second = await a.api.get(`/api/v1/analytics/orphan-visits?limit=1&cursor=${first.body.nextCursor}`);
    expect([second.body.data.length, second.body.nextCursor]).toEqual([1, null]);
    expect([first.body.data[0], second.body.data[0]]).toEqual(listed.data);
    expect((await a.api.get(`/api/v1/analytics/orphan-visits?domain=${b.name}`)).body.data).toEqual([]);
    expect((await a.api.get(`/api/v1/analytics/orphan-visits?domain=${a.name.toUpperCase()}`)).body.data).toHaveLength(2);
    expect((await a.api.get(`/api/v1/analytics/orphan-visits?from=${new Date(Date.now() + 60_000).toISOString()}&to=${new Date(Date.now() + 120_000).toISOString()}`)).body.data).toEqual([]);
    expect((await b.api.get('/api/v1/analytics/orphan-visits')).body).toEqual({ object: 'list', data: [], nextCursor: null });
    for (const bad of ['cursor=nope', 'limit=0', 'domain=not%20a%20domain', 'from=yesterday', 'extra=1']) {
      const res = await a.api.get(`/api/v1/analytics/orphan-visits?${bad}`);
      expect([res.status, res.body.error?.code], bad).toEqual([400, bad.startsWith('cursor') ? 'invalid_cursor' : expect.any(String)]);
    }

    // Cleared: the 404 again, at once on this ingress.
    expect((await patch(a, { notFoundUrl: null })).body).toMatchObject({ rootUrl: 'https://acme.example.com/', notFoundUrl: null });
    expect((await visit(a.name, '/gone')).status).toBe(404);
    expect((await visit(a.name, '/')).status).toBe(302);
  });

  it('on reserved root paths: the mail API\'s /emails and /webhooks are the domain\'s on a branded host, recorded as orphan visits; /favicon.ico and /robots.txt are plain 404s, not visits (issue 50)', async () => {
    const a = await workspaceWithDomain();
    const b = await workspaceWithDomain();
    expect((await a.api.patch(`/api/v1/link-domains/${a.id}`, { rootUrl: 'https://acme.example.com/', notFoundUrl: 'https://acme.example.com/missing' })).status).toBe(200);

    // Asked first: had they been recorded, they would be listed with the visits below.
    for (const path of ['/favicon.ico', '/robots.txt']) {
      for (const host of [a.name, b.name, new URL(ingress.url).host]) {
        const res = await visit(host, path);
        expect([host, path, res.status, res.location, JSON.parse(res.body).error.code]).toEqual([host, path, 404, undefined, 'route_not_found']);
      }
    }
    // The mail API's root paths (and Resend's other resources) on A's branded host: its notFoundUrl, each an orphan visit.
    for (const path of ['/emails', '/webhooks', '/events', '/topics']) {
      const res = await visit(a.name, path);
      expect([path, res.status, res.location]).toEqual([path, 302, 'https://acme.example.com/missing']);
    }
    // With a key, or another method or a deeper path: the branded host still never answers the mail API.
    expect((await visit(a.name, '/emails', { authorization: 'Bearer re_not_a_key' })).status).toBe(302);
    for (const [method, path] of [['POST', '/emails'], ['GET', '/emails/4f7c6b8e-0a53-4c71-9b1e-2f0b3c1d5e6a'], ['POST', '/webhooks'], ['DELETE', '/topics/x']]) {
      const res = await visit(a.name, path!, { authorization: 'Bearer re_not_a_key' }, method);
      expect([method, path, res.status, JSON.parse(res.body).error.code]).toEqual([method, path, 404, 'route_not_found']);
    }
    // B's branded host has no fallback: the link product's 404, not the mail API's 401.
    for (const path of ['/emails', '/webhooks']) {
      const res = await visit(b.name, path);
      expect([path, res.status, JSON.parse(res.body).error.code]).toEqual([path, 404, 'not_found']);
    }
    // The service's own host keeps the mail API.
    expect((await visit(new URL(ingress.url).host, '/emails')).status).toBe(401);

    // A's visits, and none of the favicon's or robots.txt's; B has none.
    const listed = await eventually(async () => {
      const res = await a.api.get('/api/v1/analytics/orphan-visits');
      return res.body.data?.length >= 5 ? res.body : undefined;
    }, 30_000);
    expect(listed.data.map((v: { path: string; type: string }) => `${v.type} ${v.path}`).sort()).toEqual([
      'invalid_short_url /emails', 'invalid_short_url /emails', 'invalid_short_url /events', 'invalid_short_url /topics', 'invalid_short_url /webhooks',
    ]);
    expect((await b.api.get('/api/v1/analytics/orphan-visits')).body.data).toEqual([]);
  });
});
