// The MCP endpoint checks Origin against DNS rebinding (MCP transport spec,
// Streamable HTTP 2025-06-18): a browser Origin that is not the service's own
// nor configured in MCP_ALLOWED_ORIGINS is refused with 403 and a JSON-RPC
// error body, before authentication; requests without Origin (non-browser
// clients) are served as before.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { call, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

const ALLOWED = 'https://app.example.com';
const PUBLIC = 'http://linkmail.example.net:8080';
let ingress: TestIngress;
let key: string;

beforeAll(async () => {
  ingress = await startIngress({ MCP_ALLOWED_ORIGINS: `${ALLOWED}, http://localhost:5173`, PUBLIC_BASE_URL: PUBLIC });
  key = (await workspaceWithKey(ingress.url)).key;
}, 60_000);

afterAll(async () => {
  await ingress?.close();
});

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
const post = (origin: string | undefined, withKey = true) =>
  call(ingress.url, 'POST', '/api/mcp', { key: withKey ? key : undefined, body: initialize, headers: { accept: 'application/json', ...(origin === undefined ? {} : { origin }) } });

it('refuses a foreign browser Origin with 403 and a JSON-RPC error, before the key is checked', async () => {
  for (const origin of ['https://evil.example', 'http://app.example.com', 'https://app.example.com.evil.example', 'null']) {
    const res = await post(origin);
    expect(res.status, origin).toBe(403);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: expect.stringContaining('Origin') } });
  }
  // Without a key too: the Origin is checked first.
  expect((await post('https://evil.example', false)).status).toBe(403);
  for (const method of ['GET', 'DELETE']) {
    const res = await call(ingress.url, method, '/api/mcp', { headers: { origin: 'https://evil.example' } });
    expect(res.status, method).toBe(403);
    expect(res.body.error.code).toBe(-32000);
  }
});

it('serves requests without Origin, from a configured Origin and from its own', async () => {
  for (const origin of [undefined, ALLOWED, 'HTTPS://App.Example.com:443', 'http://localhost:5173', PUBLIC]) {
    const res = await post(origin);
    expect(res.status, String(origin)).toBe(200);
    expect(res.body.result.protocolVersion).toBe('2025-06-18');
  }
});

it('a browser-like SDK client from a foreign Origin fails to connect with 403', async () => {
  const transport = new StreamableHTTPClientTransport(new URL(`${ingress.url}/api/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}`, origin: 'https://evil.example', 'x-forwarded-for': freshIp() } },
  });
  const client = new Client({ name: 'origin-test', version: '1.0.0' });
  const err = await client.connect(transport).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(StreamableHTTPError);
  expect((err as StreamableHTTPError).code).toBe(403);
  const allowed = new Client({ name: 'origin-test', version: '1.0.0' });
  await allowed.connect(new StreamableHTTPClientTransport(new URL(`${ingress.url}/api/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}`, origin: ALLOWED, 'x-forwarded-for': freshIp() } },
  }));
  expect((await allowed.listTools()).tools.length).toBeGreaterThan(0);
  await allowed.close();
});
