// Every API response carries X-RateLimit-Limit, -Remaining and -Reset: every
// operation of the OpenAPI document (with and without a key), the refusals that
// come from no route (a malformed URL, an unknown path), the MCP endpoint's own
// refusals, and every response while Redis cannot be reached. The redirect
// (/:shortId) and the health probes are not API responses and are left out
// (the redirect's 429 carries its own limit's headers, tested with redirects).
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, freshIp, startIngress, type Response, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { testConfig } from '../../support/env.ts';

const HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'] as const;
const ANY_UUID = '00000000-0000-4000-8000-000000000000';

function expectLimitHeaders(res: Response, what: string): void {
  for (const header of HEADERS) expect(res.headers.get(header) ?? 'missing', `${what}: ${header} (status ${res.status})`).toMatch(/^\d+$/);
  expect(res.status, what).toBeLessThan(500);
}

/** A raw request (the fetch API would normalise a malformed path). */
async function rawGet(baseUrl: string, path: string): Promise<{ status: number; headers: Record<string, string> }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${freshIp()}\r\nConnection: close\r\n\r\n`));
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers });
    });
  });
}

/** The status and headers of a GET that may answer a stream, without waiting for its end. */
async function streamHeaders(url: string, headers: Record<string, string>): Promise<Response> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { 'x-forwarded-for': freshIp(), ...headers }, signal: abort.signal });
  abort.abort();
  return { status: res.status, headers: res.headers, body: undefined };
}

let ingress: TestIngress;
let key: string;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  key = (await workspaceWithKey(ingress.url)).key;
});
afterAll(async () => {
  await ingress?.close();
});

describe('X-RateLimit headers on every API response', () => {
  it('are on every operation of the OpenAPI document, with and without a key', async () => {
    const doc = await call(ingress.url, 'GET', '/api/v1/openapi');
    expect(doc.status).toBe(200);
    expectLimitHeaders(doc, 'GET /api/v1/openapi');
    const credentials: Record<string, string> = { bearerAuth: key, adminToken: ADMIN_TOKEN };
    let walked = 0;
    for (const [path, item] of Object.entries<Record<string, { tags?: string[]; security?: Record<string, string[]>[]; responses?: Record<string, { content?: Record<string, unknown> }> }>>(doc.body.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        // Not API responses: the short link itself, the ends of mail links, the analytics pages and the health probes.
        if (operation.tags?.includes('redirect') || operation.tags?.includes('tracking') || operation.tags?.includes('analytics-pages') || path === '/healthz' || path === '/readyz') continue;
        const url = path.replace(/\{[^}]+\}/g, ANY_UUID);
        const raw = ['post', 'put', 'patch'].includes(method) ? '{}' : undefined;
        const scheme = Object.keys(operation.security?.[0] ?? {})[0];
        const variants = scheme ? [credentials[scheme], undefined] : [undefined];
        for (const credential of variants) {
          const headers: Record<string, string> = credential ? { authorization: `Bearer ${credential}` } : {};
          // A live stream (Server-Sent Events) never ends: its headers are read, then the request is let go.
          const streams = Object.values(operation.responses ?? {}).some((r) => r.content?.['text/event-stream'] !== undefined);
          const res = streams ? await streamHeaders(`${ingress.url}${url}`, headers) : await call(ingress.url, method.toUpperCase(), url, { raw, headers });
          expectLimitHeaders(res, `${method.toUpperCase()} ${path} ${credential ? 'with' : 'without'} a key`);
          walked++;
        }
      }
    }
    expect(walked).toBeGreaterThan(40);
  });

  it('are on the MCP endpoint\'s refusals and its discovery document', async () => {
    expectLimitHeaders(await call(ingress.url, 'GET', '/api/mcp'), 'GET /api/mcp (405)');
    expectLimitHeaders(await call(ingress.url, 'DELETE', '/api/mcp'), 'DELETE /api/mcp (405)');
    const notAcceptable = await call(ingress.url, 'POST', '/api/mcp', { key, headers: { accept: 'text/event-stream' }, body: { jsonrpc: '2.0', id: 1, method: 'ping' } });
    expect(notAcceptable.status).toBe(406);
    expectLimitHeaders(notAcceptable, 'POST /api/mcp (406)');
    expectLimitHeaders(await call(ingress.url, 'GET', '/.well-known/mcp.json'), 'GET /.well-known/mcp.json');
  });

  it('are on answers that come from no route: a malformed URL and an unknown path', async () => {
    for (const path of ['/api/v1/links/%E0%A4%A', '/%zz']) {
      const res = await rawGet(ingress.url, path);
      expect(res.status, path).toBe(400);
      for (const header of HEADERS) expect(res.headers[header] ?? 'missing', `${path}: ${header}`).toMatch(/^\d+$/);
    }
    const ip = freshIp();
    const unknown = await call(ingress.url, 'GET', '/api/v1/no-such-thing', { ip });
    expect(unknown.status).toBe(404);
    expectLimitHeaders(unknown, 'unknown /api/v1 path without a key');
    // Without a key, they describe the IP's failed-authentication allowance, read without counting.
    expect(unknown.headers.get('x-ratelimit-limit')).toBe('10');
    expect(unknown.headers.get('x-ratelimit-remaining')).toBe('10');
    expect((await call(ingress.url, 'GET', '/api/v1/links', { ip })).status).toBe(401);
    expect((await call(ingress.url, 'GET', '/api/v1/openapi', { ip })).headers.get('x-ratelimit-remaining')).toBe('9');

  });
});

describe('while Redis cannot be reached', () => {
  let proxy: Server;
  const sockets = new Set<Socket>();
  let down: TestIngress;
  let downKey: string;

  beforeAll(async () => {
    // The ingress reaches Redis through this proxy; closing it is an outage for that ingress only.
    const redis = new URL(testConfig().REDIS_URL);
    proxy = createServer((client) => {
      const upstream = connect(Number(redis.port || 6379), redis.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as { port: number }).port;
    down = await startIngress({ REDIS_URL: `redis://127.0.0.1:${port}${redis.pathname}` });
    downKey = (await workspaceWithKey(down.url)).key;
    await new Promise<void>((resolve) => {
      proxy.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  });
  afterAll(async () => {
    await down?.close();
  });

  it('let requests through and show the configured limit, all of it remaining, reset a window from now', async () => {
    const now = Math.floor(Date.now() / 1000);
    const ok = await call(down.url, 'GET', '/api/v1/links?limit=1', { key: downKey });
    expect(ok.status).toBe(200);
    expectLimitHeaders(ok, 'GET /api/v1/links with a key');
    expect(ok.headers.get('x-ratelimit-limit')).toBe('100');
    expect(ok.headers.get('x-ratelimit-remaining')).toBe('100');
    const reset = Number(ok.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThanOrEqual(now + 59);
    expect(reset).toBeLessThanOrEqual(now + 62);

    const bad = await call(down.url, 'GET', '/api/v1/links', { key: `lk_live_${'z'.repeat(32)}` });
    expect(bad.status).toBe(401);
    expectLimitHeaders(bad, 'a bad key');
    expect(bad.headers.get('x-ratelimit-limit')).toBe('10');

    expectLimitHeaders(await call(down.url, 'GET', '/api/v1/openapi'), 'GET /api/v1/openapi');
    expectLimitHeaders(await call(down.url, 'GET', '/.well-known/mcp.json'), 'GET /.well-known/mcp.json');
    expectLimitHeaders(await call(down.url, 'GET', '/admin/v1/workspaces?limit=1', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }), 'GET /admin/v1/workspaces');
  });
});
