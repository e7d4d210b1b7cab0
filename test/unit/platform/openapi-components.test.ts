// Named schemas and operation ids on a bare server (no stack): a plugin that
// adds named schemas keeps the strict validators, the schemas appear under their
// own names in the document, and a documented route cannot go without a unique
// operationId.
import { Type } from '@sinclair/typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { addComponents, ref } from '../../../src/platform/http/components.ts';
import { buildServer, type App } from '../../../src/platform/http/server.ts';
import { createLogger } from '../../../src/platform/logger.ts';

const Thing = Type.Object({ name: Type.String(), size: Type.Integer() }, { $id: 'Thing', additionalProperties: false });

let app: App | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function server(): Promise<App> {
  app = await buildServer({
    log: createLogger({ LOG_LEVEL: 'silent' }),
    checks: [],
    openapi: { title: 'Test', version: '1.0.0', description: 'Test.', serverUrl: 'http://localhost', products: [] },
  });
  return app;
}

describe('named schemas', () => {
  it('are validated strictly in a plugin that adds them, and named in the document', async () => {
    const app = await server();
    await app.register(async (api) => {
      addComponents(api, [Thing]);
      api.post('/things', { schema: { operationId: 'createThing', body: ref(Thing), response: { 201: ref(Thing) } } }, async (request, reply) => reply.status(201).send(request.body));
    });
    await app.ready();

    const ok = await app.inject({ method: 'POST', url: '/things', payload: { name: 'a', size: 1 } });
    expect(ok.statusCode).toBe(201);
    expect(ok.json()).toEqual({ name: 'a', size: 1 });
    // Not coerced, not stripped: the body rules of validation.ts, not Fastify's default Ajv.
    const coerced = await app.inject({ method: 'POST', url: '/things', payload: { name: 'a', size: '1' } });
    expect(coerced.statusCode).toBe(400);
    expect(coerced.json().error.code).toBe('validation_failed');
    const extra = await app.inject({ method: 'POST', url: '/things', payload: { name: 'a', size: 1, colour: 'red' } });
    expect(extra.statusCode).toBe(400);
    expect(extra.json().error.code).toBe('unknown_field');

    const doc = app.swagger() as any;
    expect(doc.components.schemas.Thing.properties.size).toEqual({ type: 'integer' });
    expect(doc.components.schemas.Error).toBeTruthy();
    expect(doc.paths['/things'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Thing' });
  });
});

describe('operation ids', () => {
  it('are required on every documented route', async () => {
    const app = await server();
    expect(() => app.get('/nameless', { schema: { summary: 'No operationId' } }, async () => 'x')).toThrow(/GET \/nameless: a documented route needs schema.operationId/);
    // A hidden route is not documented, so it needs none.
    expect(() => app.get('/hidden', { schema: { hide: true } }, async () => 'x')).not.toThrow();
  });

  it('are unique, one per method', async () => {
    const app = await server();
    expect(() => app.get('/other-health', { schema: { operationId: 'getHealth' } }, async () => 'x')).toThrow(/"getHealth" is already used by GET \/healthz/);
    expect(() => app.route({ method: ['GET', 'DELETE'], url: '/both', schema: { operationId: 'getOrDelete' }, handler: async () => 'x' })).toThrow(/one operationId cannot name 2 methods/);
  });
});
