// Authentication and the shared limits, across two real ingress processes
// (src/main.ts) that share only Redis and Postgres.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createHash } from 'node:crypto';
import { call, client, freshIp, INGRESS_ENV, ADMIN_TOKEN } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { childPort, startTs, waitForOutput, type Child } from '../../support/processes.ts';
import { testConfig } from '../../support/env.ts';

let one: Child;
let two: Child;
let urls: [string, string];

async function startMain(): Promise<{ child: Child; url: string }> {
  const port = childPort();
  const child = startTs('src/main.ts', [], { ...INGRESS_ENV, HTTP_PORT: port, LOG_LEVEL: 'info' });
  await waitForOutput(child, 'ingress listening');
  return { child, url: `http://127.0.0.1:${port}` };
}

beforeAll(async () => {
  const [a, b] = await Promise.all([startMain(), startMain()]);
  one = a.child;
  two = b.child;
  urls = [a.url, b.url];
});
afterAll(async () => {
  one?.process.kill('SIGTERM');
  two?.process.kill('SIGTERM');
  await Promise.all([one?.exited, two?.exited]);
});

describe('authentication', () => {
  it('answers 401 for a missing, malformed, unknown or revoked key', async () => {
    const ws = await workspaceWithKey(urls[0]);
    const missing = await call(urls[0], 'GET', '/api/v1/links');
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe('missing_api_key');
    const malformed = await call(urls[0], 'GET', '/api/v1/links', { headers: { authorization: 'Basic abc' } });
    expect(malformed.body.error.code).toBe('invalid_api_key');
    const unknown = await call(urls[0], 'GET', '/api/v1/links', { key: 'lk_live_00000000000000000000000000000000' });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.code).toBe('invalid_api_key');
    expect(unknown.headers.get('x-ratelimit-limit')).toBe('10');

    expect((await call(urls[0], 'GET', '/api/v1/links', { key: ws.key })).status).toBe(200);
    const revoke = await call(urls[1], 'DELETE', `/admin/v1/workspaces/${ws.workspaceId}/keys/${ws.keyId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(revoke.status).toBe(200);
    expect(revoke.body.revokedAt).toBeTruthy();
    // Revocation takes effect on the next request, on every instance.
    for (const url of urls) {
      const revoked = await call(url, 'GET', '/api/v1/links', { key: ws.key });
      expect(revoked.status).toBe(401);
      expect(revoked.body.error.code).toBe('invalid_api_key');
    }
  });

  it('refuses Free and Pro workspaces with 403 plan_upgrade_required', async () => {
    for (const plan of ['free', 'pro'] as const) {
      const ws = await workspaceWithKey(urls[0], plan);
      const res = await call(urls[1], 'GET', '/api/v1/links', { key: ws.key });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('plan_upgrade_required');
    }
  });

  it('stores keys only as SHA-256 hashes and lists them without secrets', async () => {
    const ws = await workspaceWithKey(urls[0]);
    const db = new pg.Client({ connectionString: testConfig().DATABASE_URL });
    await db.connect();
    try {
      const { rows } = await db.query('SELECT * FROM api_keys WHERE workspace_id = $1', [ws.workspaceId]);
      expect(rows).toHaveLength(1);
      expect(JSON.stringify(rows)).not.toContain(ws.key.slice(8));
      expect(rows[0].key_hash).toEqual(createHash('sha256').update(ws.key).digest());
    } finally {
      await db.end();
    }
    expect(ws.key).toMatch(/^lk_live_[0-9A-Za-z]{32}$/);
    const list = await call(urls[0], 'GET', `/admin/v1/workspaces/${ws.workspaceId}/keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(list.body.data).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain(ws.key.slice(12));
    expect(list.body.data[0].prefix).toBe(ws.key.slice(0, 12));
  });

  it('guards the admin API with the operator token', async () => {
    expect((await call(urls[0], 'GET', '/admin/v1/workspaces')).status).toBe(401);
    const wrong = await call(urls[0], 'GET', '/admin/v1/workspaces', { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('invalid_admin_token');
    const badPlan = await call(urls[0], 'POST', '/admin/v1/workspaces', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: { name: 'x', plan: 'platinum' } });
    expect(badPlan.status).toBe(400);
  });
});

describe('limits across two ingress instances', () => {
  it('answers the 11th failed authentication from one IP with 429, alternating instances', async () => {
    const ip = freshIp();
    for (let i = 0; i < 10; i++) {
      const res = await call(urls[i % 2]!, 'GET', '/api/v1/links', { key: `lk_live_${'x'.repeat(32)}`, ip });
      expect(res.status).toBe(401);
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(9 - i));
    }
    const eleventh = await call(urls[0], 'GET', '/api/v1/links', { ip });
    expect(eleventh.status).toBe(429);
    expect(eleventh.body.error.code).toBe('auth_rate_limited');
    expect(Number(eleventh.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(eleventh.headers.get('x-ratelimit-remaining')).toBe('0');
    // Even a valid key from that address waits; another address is not affected.
    const ws = await workspaceWithKey(urls[1]);
    expect((await call(urls[1], 'GET', '/api/v1/links', { key: ws.key, ip })).status).toBe(429);
    expect((await call(urls[1], 'GET', '/api/v1/links', { key: ws.key, ip: freshIp() })).status).toBe(200);
  });

  it('answers the 101st request of a workspace in a minute with 429 and correct headers, alternating instances', async () => {
    const ws = await workspaceWithKey(urls[0]);
    const other = await workspaceWithKey(urls[0]);
    const started = Math.floor(Date.now() / 1000);
    for (let i = 0; i < 100; i++) {
      const api = client(urls[i % 2]!, ws.key);
      const res = i % 3 === 0 ? await api.post('/api/v1/campaigns', { name: `c${i}` }) : await api.get('/api/v1/links?limit=1');
      expect(res.status).toBeLessThan(300);
      expect(res.headers.get('x-ratelimit-limit')).toBe('100');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(99 - i));
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThanOrEqual(started + 59);
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 61);
    }
    const limited = await client(urls[1], ws.key).get('/api/v1/links');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // A refused write changes nothing.
    const write = await client(urls[0], ws.key).post('/api/v1/links', { destination: 'https://example.com/limited' });
    expect(write.status).toBe(429);
    // Another workspace has its own allowance.
    expect((await client(urls[0], other.key).get('/api/v1/links')).status).toBe(200);
  });
});
