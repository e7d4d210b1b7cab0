// The public OpenAPI document: valid OpenAPI 3.1, served without a key, and
// listing every route of the server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startIngress, type TestIngress } from '../../support/ingress.ts';
import { compileAllSerializers } from '../../../src/platform/http/lazy-serializers.ts';
import { compileAllValidators } from '../../../src/platform/http/validation.ts';

let ingress: TestIngress;

/** The schema itself, following a reference to a named schema (#/components/schemas/…). */
function resolved(doc: any, schema: any): any {
  const prefix = '#/components/schemas/';
  return typeof schema?.$ref === 'string' && schema.$ref.startsWith(prefix) ? resolved(doc, doc.components.schemas[schema.$ref.slice(prefix.length)]) : schema;
}

beforeAll(async () => {
  ingress = await startIngress();
});
afterAll(async () => {
  await ingress?.close();
});

describe('GET /api/v1/openapi', () => {
  it('names response schemas every route can serialize with (compiled lazily, so all of them once here)', () => {
    expect(compileAllSerializers()).toBeGreaterThan(100);
  });

  it('has request schemas Ajv compiles, for every part of every route (compiled lazily, so all of them once here)', () => {
    expect(compileAllValidators()).toBeGreaterThan(100);
  });

  it('is public, valid OpenAPI 3.1, and documents auth, errors and rate-limit headers', async () => {
    const res = await fetch(`${ingress.url}/api/v1/openapi`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const doc = (await res.json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const create = doc.paths['/api/v1/links'].post;
    expect(create.responses['201'].headers['x-ratelimit-limit']).toBeTruthy();
    expect(create.responses['429'].headers['retry-after']).toBeTruthy();
    expect(resolved(doc, create.responses['400'].content['application/json'].schema).properties.error.properties.code).toBeTruthy();
    expect(resolved(doc, create.requestBody.content['application/json'].schema).additionalProperties).toBe(false);
  });

  it('lists every API route of the server', async () => {
    const doc = (await (await fetch(`${ingress.url}/api/v1/openapi`)).json()) as any;
    const documented = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${path}`)));
    const expected = ingress.app.routeTable
      .filter((r) => !['HEAD', 'OPTIONS'].includes(r.method))
      .map((r) => `${r.method} ${r.url.replace(/:([A-Za-z]+)/g, '{$1}')}`);
    expect(expected.length).toBeGreaterThan(10);
    for (const route of expected) expect(documented, route).toContain(route);
    // The MCP endpoint, its refusals and its discovery document are routes of the server too.
    for (const route of ['POST /api/mcp', 'GET /api/mcp', 'DELETE /api/mcp', 'GET /.well-known/mcp.json']) expect(documented, route).toContain(route);
    expect(doc.paths['/.well-known/mcp.json'].get.security).toEqual([]);
    expect(doc.paths['/api/mcp'].post.responses['429']).toBeTruthy();
    // One endpoint for both products: either product's key.
    expect(doc.paths['/api/mcp'].post.security).toEqual([{ bearerAuth: [] }, { mailKey: [] }]);
    expect(doc.paths['/api/mcp'].post.tags).toEqual(['mcp']);
  });
});
