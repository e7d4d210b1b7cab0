// The ingress over real HTTP: health, readiness against the real services,
// request ids, one error body shape, 4xx for malformed JSON and unknown routes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { buildServer, type App } from '../../../src/platform/http/server.ts';
import { dependencyChecks } from '../../../src/platform/health.ts';
import { createRedis } from '../../../src/platform/redis.ts';
import { registryConnection } from '../../../src/platform/registry/registry-connection.ts';
import { startPlatform, type Platform } from '../../../src/platform/platform.ts';
import { deadLettersTopic } from '../../../src/platform/actors/dead-letters-topic.ts';
import { testConfig } from '../../support/env.ts';
import { childPort, startTs, waitForOutput } from '../../support/processes.ts';

let platform: Platform;
let app: App;
let base: string;

beforeAll(async () => {
  platform = await startPlatform(testConfig(), { name: 'test', topics: [deadLettersTopic], migrate: false });
  app = await buildServer({ log: platform.log, checks: platform.checks, bodyLimit: 1024 });
  // A route with a strict body schema, to exercise the platform's validation and error mapping.
  app.post('/echo', { schema: { body: Type.Object({ name: Type.String({ maxLength: 10 }), count: Type.Integer() }, { additionalProperties: false }) } }, async (req) => req.body);
  // A body that may be left out (as POST /broadcasts/:id/send takes it).
  app.post('/optional-body', {
    preValidation: async (req) => {
      req.body ??= {};
    },
    schema: { body: Type.Object({ name: Type.Optional(Type.String()) }, { additionalProperties: false }) },
  }, async (req) => ({ given: (req.body as { name?: string }).name !== undefined }));
  app.get('/boom', async () => {
    throw new Error('secret internal detail');
  });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app?.close();
  await platform?.shutdown.run('test done');
});

const post = (path: string, body: string, type = 'application/json') =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': type }, body });

describe('ingress', () => {
  it('answers /healthz', async () => {
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz after checking every real dependency', async () => {
    const res = await fetch(`${base}/readyz`);
    const body = (await res.json()) as { status: string; checks: { name: string; ok: boolean }[] };
    expect(res.status).toBe(200);
    expect(body.status).toBe('ready');
    expect(body.checks.map((c) => c.name).sort()).toEqual(['clickhouse', 'kafka', 'postgres', 'process', 'redis', 'schemaRegistry']);
    expect(body.checks.every((c) => c.ok)).toBe(true);
  });

  it('reports not ready, naming the dependency, when one is down', async () => {
    const deadRedis = createRedis({ REDIS_URL: 'redis://127.0.0.1:1/0' }, platform.log);
    const checks = dependencyChecks({ kafkaAdmin: platform.kafkaAdmin, registry: registryConnection(platform.config), clickhouse: platform.clickhouse, pg: platform.pg, redis: deadRedis });
    const server = await buildServer({ log: platform.log, checks });
    const url = await server.listen({ host: '127.0.0.1', port: 0 });
    try {
      const res = await fetch(`${url}/readyz`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { checks: { name: string; ok: boolean; error?: string }[] };
      const redis = body.checks.find((c) => c.name === 'redis')!;
      expect(redis.ok).toBe(false);
      expect(redis.error).toBeTruthy();
      expect(body.checks.filter((c) => c.name !== 'redis').every((c) => c.ok)).toBe(true);
    } finally {
      await server.close();
      deadRedis.disconnect();
    }
  });

  it('gives every response a request id, keeping a well-formed one the client sent', async () => {
    const generated = await fetch(`${base}/healthz`);
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const given = await fetch(`${base}/healthz`, { headers: { 'x-request-id': 'client-abc.123' } });
    expect(given.headers.get('x-request-id')).toBe('client-abc.123');
    const refused = await fetch(`${base}/healthz`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(refused.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers unknown routes with 404 and the error body', async () => {
    const res = await fetch(`${base}/no/such/route?x=1`, { headers: { 'x-request-id': 'req-404' } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'route_not_found', message: 'No route for GET /no/such/route.', requestId: 'req-404' } });
  });

  it('answers malformed JSON, and an empty JSON body where a body is needed, with 400 invalid_json', async () => {
    for (const body of ['{"name": "x",', '{bad}', 'nul']) {
      const res = await post('/echo', body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_json');
    }
    // An empty body with a JSON content type is "no body" (many SDKs send the header on every request):
    // a route that needs a body answers invalid_json, as docs/links-api.md says; one whose body may be
    // left out takes it; no body without the header is a missing body (validation_failed).
    for (const body of ['', ' \n']) {
      const empty = await post('/echo', body);
      expect(empty.status).toBe(400);
      expect(await empty.json()).toMatchObject({ error: { code: 'invalid_json', message: 'Request body is empty but Content-Type is application/json.' } });
    }
    const optional = await post('/optional-body', '');
    expect([optional.status, await optional.json()]).toEqual([200, { given: false }]);
    const none = await fetch(`${base}/echo`, { method: 'POST' });
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
    const proto = await post('/echo', '{"name":"a","count":1,"__proto__":{"x":1}}');
    expect(proto.status).toBe(400);
    expect(((await proto.json()) as { error: { code: string } }).error.code).toBe('invalid_json');
  });

  it('refuses text/plain bodies with 415 and answers a malformed URL with the error body', async () => {
    const text = await post('/echo', '{"name":"a","count":1}', 'text/plain');
    expect(text.status).toBe(415);
    const badUrl = await fetch(`${base}/echo/%ZZ`);
    expect(badUrl.status).toBe(400);
    expect(((await badUrl.json()) as { error: { code: string } }).error.code).toBe('bad_url');
  });

  it('rejects wrong types without coercion and unknown fields, naming the field', async () => {
    const wrongType = await post('/echo', JSON.stringify({ name: 'a', count: '3' }));
    expect(wrongType.status).toBe(400);
    const wt = (await wrongType.json()) as { error: { code: string; details: { path: string }[] } };
    expect(wt.error.code).toBe('validation_failed');
    expect(wt.error.details.map((d) => d.path)).toContain('/count');

    const unknown = await post('/echo', JSON.stringify({ name: 'a', count: 3, extra: true }));
    expect(unknown.status).toBe(400);
    const uk = (await unknown.json()) as { error: { code: string; details: { path: string }[] } };
    expect(uk.error.code).toBe('unknown_field');
    expect(uk.error.details.map((d) => d.path)).toContain('/extra');

    const ok = await post('/echo', JSON.stringify({ name: 'a', count: 3 }));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ name: 'a', count: 3 });
  });

  it('answers oversize bodies with 413 and other media types with 415', async () => {
    const big = await post('/echo', JSON.stringify({ name: 'x'.repeat(5000), count: 1 }));
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
    const xml = await post('/echo', '<a/>', 'application/xml');
    expect(xml.status).toBe(415);
    expect(((await xml.json()) as { error: { code: string } }).error.code).toBe('unsupported_media_type');
  });

  it('hides internal errors behind 500 internal_error', async () => {
    const res = await fetch(`${base}/boom`);
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('internal_error');
    expect(JSON.stringify(body)).not.toContain('secret');
  });
});

describe('ingress process', () => {
  it('starts from src/main.ts, serves, and drains on SIGTERM with exit code 0', async () => {
    const port = childPort();
    const child = startTs('src/main.ts', [], { HTTP_PORT: port, LOG_LEVEL: 'info' });
    try {
      await waitForOutput(child, 'ingress listening');
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(res.status).toBe(200);
    } finally {
      child.process.kill('SIGTERM');
    }
    const exit = await child.exited;
    // A failure shows the process's own account of its start and shutdown.
    expect(exit.code, child.output().slice(-6000)).toBe(0);
    expect(child.output()).toContain('shutdown complete');
  });

  it('refuses to start with a clear message when configuration is invalid', async () => {
    const child = startTs('src/main.ts', [], { HTTP_PORT: 'eighty' });
    const exit = await child.exited;
    expect(exit.code).toBe(2);
    expect(child.output()).toContain('HTTP_PORT');
  });
});
