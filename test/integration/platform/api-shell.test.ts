// The platform's API shell with two products side by side: the real link
// product and a small second product ("probe") with its own keys, its own
// request field and a root path of its own, as mail will have. Each product's
// routes see only its own authentication; an unknown /api/v1 path is one 404
// carrying the limit headers of the product whose key was sent; and a root path
// the second product serves cannot be taken as a short ID.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { registerApiShell, type ApiProduct } from '../../../src/platform/http/api-shell.ts';
import { bearerToken, createAttemptGuard } from '../../../src/platform/http/attempt-guard.ts';
import { ApiError } from '../../../src/platform/http/errors.ts';
import { buildServer, type App } from '../../../src/platform/http/server.ts';
import { startPlatform, type Platform } from '../../../src/platform/platform.ts';
import { linksHttp, linksOpenApi } from '../../../src/links/links-http.ts';
import { wireLinks } from '../../../src/links/wiring.ts';
import { SERVICE_INFO, serviceTopics, type ServiceConfig } from '../../../src/service.ts';
import { testConfig } from '../../support/env.ts';
import { call, INGRESS_ENV } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

declare module 'fastify' {
  interface FastifyRequest {
    probeAuth: { tenant: string } | null;
  }
}

const PROBE_KEY = 'pk_test_good';

const probe: ApiProduct = {
  name: 'probe',
  securityScheme: 'probeKey',
  claims: (request: FastifyRequest) => bearerToken(request)?.startsWith('pk_') ?? false,
  authenticate: async (request, reply) => {
    if (bearerToken(request) !== PROBE_KEY) throw new ApiError(401, 'invalid_api_key', 'not a probe key');
    reply.header('x-ratelimit-limit', '7');
    request.probeAuth = { tenant: 'probe-tenant' };
  },
  register: async (api) => {
    api.decorateRequest('probeAuth', null);
    api.get('/things', { schema: { tags: ['probe'], operationId: 'listProbeThings' } }, async (request) => ({ probe: request.probeAuth, links: request.linksAuth ?? null }));
  },
};

let platform: Platform<ServiceConfig>;
let app: App;
let url: string;

beforeAll(async () => {
  const config = testConfig(INGRESS_ENV);
  platform = await startPlatform(config, { name: 'test-shell', topics: serviceTopics, migrate: false });
  app = await buildServer({
    log: platform.log,
    checks: platform.checks,
    trustProxy: ['127.0.0.1'],
    openapi: {
      ...SERVICE_INFO,
      serverUrl: config.PUBLIC_BASE_URL,
      products: [linksOpenApi, { name: 'Probe', tags: [{ name: 'probe', description: 'A second product.' }], securitySchemes: { probeKey: { type: 'http', scheme: 'bearer', description: 'pk_…' } } }],
    },
  });
  const guard = createAttemptGuard(platform.redis, platform.log, config.AUTH_ATTEMPTS_PER_MINUTE);
  const links = linksHttp(platform, wireLinks(platform, config, { reservedShortIds: app.reservedPaths }), guard);
  await registerApiShell(app, { products: [links.api, probe], adminToken: config.ADMIN_TOKEN, guard });
  // The second product's root path, registered after the link product was wired.
  app.get('/emails/:id', { schema: { tags: ['probe'], security: [], operationId: 'getProbeEmail' } }, async () => ({ ok: true }));
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
  await platform?.shutdown.run('test done');
});

describe('two products under /api/v1', () => {
  it('runs only the product\'s own authentication on its routes', async () => {
    const res = await call(url, 'GET', '/api/v1/things', { key: PROBE_KEY });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ probe: { tenant: 'probe-tenant' }, links: null });
    expect(res.headers.get('x-ratelimit-limit')).toBe('7');
    const links = await workspaceWithKey(url);
    expect((await call(url, 'GET', '/api/v1/things', { key: links.key })).status).toBe(401);
    expect((await call(url, 'GET', '/api/v1/links', { key: PROBE_KEY })).body.error.code).toBe('invalid_api_key');
    expect((await call(url, 'GET', '/api/v1/links', { key: links.key })).status).toBe(200);
  });

  it('answers an unknown path with one 404 and the limit headers of the product whose key was sent', async () => {
    const links = await workspaceWithKey(url);
    const withLinksKey = await call(url, 'GET', '/api/v1/no-such-thing', { key: links.key });
    expect(withLinksKey.status).toBe(404);
    expect(withLinksKey.body.error.code).toBe('route_not_found');
    expect(withLinksKey.headers.get('x-ratelimit-limit')).toBe('100');
    const withProbeKey = await call(url, 'GET', '/api/v1/no-such-thing', { key: PROBE_KEY });
    expect(withProbeKey.status).toBe(404);
    expect(withProbeKey.body.error.code).toBe('route_not_found');
    expect(withProbeKey.headers.get('x-ratelimit-limit')).toBe('7');
    const withoutKey = await call(url, 'GET', '/api/v1/no-such-thing');
    expect(withoutKey.status).toBe(404);
    expect(withoutKey.body.error.code).toBe('route_not_found');
  });

  it('checks a product\'s key on an unknown path before reading the body, as on the product\'s routes', async () => {
    const badKey = await call(url, 'POST', '/api/v1/no-such-thing', { key: 'lk_live_00000000000000000000000000000000', raw: '{not json' });
    expect(badKey.status).toBe(401);
    expect(badKey.body.error.code).toBe('invalid_api_key');
    expect(badKey.headers.get('x-ratelimit-limit')).toBeTruthy();
    const badProbeKey = await call(url, 'POST', '/api/v1/no-such-thing', { key: 'pk_test_wrong', raw: '{not json' });
    expect(badProbeKey.status).toBe(401);
  });

  it('documents both products in one OpenAPI document, each with its own tag group and key', async () => {
    const doc = (await call(url, 'GET', '/api/v1/openapi')).body;
    expect(doc.info.title).toBe(SERVICE_INFO.title);
    expect(doc['x-tagGroups'].map((g: { name: string }) => g.name)).toEqual(['Platform', 'Links', 'Probe']);
    expect(doc.paths['/api/v1/things'].get.security).toEqual([{ probeKey: [] }]);
    expect(doc.paths['/api/v1/links'].get.security).toEqual([{ bearerAuth: [] }]);
  });
});

describe('short IDs the service reserves', () => {
  it('derives them from the routes served, so another product\'s root path cannot become a short link', async () => {
    const { key } = await workspaceWithKey(url);
    for (const shortId of ['emails', 'EMAILS', 'healthz', 'readyz', 'api', 'admin']) {
      const res = await call(url, 'POST', '/api/v1/links', { key, body: { destination: 'https://example.com/', shortId } });
      expect(res.status, shortId).toBe(400);
      expect(res.body.error.code, shortId).toBe('short_id_reserved');
    }
    const free = await call(url, 'POST', '/api/v1/links', { key, body: { destination: 'https://example.com/', shortId: 'things' } });
    expect(free.status).toBe(201);
    expect(app.reservedPaths.has('emails')).toBe(true);
    expect(app.reservedPaths.has(':id')).toBe(false);
  });
});
