// Mail organizations, keys by kind, domain restriction and sending domains, through the real ingress.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { adminOptions, freshDomain, mailKey, organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

let ingress: TestIngress;
let url: string;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
  url = ingress.url;
});
afterAll(async () => ingress?.close());

describe('organizations (operators)', () => {
  it('creates free and pro organizations with the caps that apply', async () => {
    const free = await call(url, 'POST', '/admin/v1/organizations', { ...adminOptions, body: { name: 'Acme', plan: 'free' } });
    expect(free.status).toBe(201);
    expect(free.body).toMatchObject({ object: 'organization', name: 'Acme', plan: 'free', daily_send_cap: null, effective_daily_send_cap: 100 });
    const pro = await call(url, 'POST', '/admin/v1/organizations', { ...adminOptions, body: { name: 'Big', plan: 'pro' } });
    expect(pro.body.effective_daily_send_cap).toBe(20_000);

    const lowered = await call(url, 'PATCH', `/admin/v1/organizations/${free.body.id}`, { ...adminOptions, body: { daily_send_cap: 40 } });
    expect(lowered.body).toMatchObject({ daily_send_cap: 40, effective_daily_send_cap: 40 });
    const zero = await call(url, 'PATCH', `/admin/v1/organizations/${free.body.id}`, { ...adminOptions, body: { daily_send_cap: 0 } });
    expect(zero.body.effective_daily_send_cap).toBe(100);
    const above = await call(url, 'PATCH', `/admin/v1/organizations/${free.body.id}`, { ...adminOptions, body: { daily_send_cap: 101 } });
    expect(above.status).toBe(400);
    expect(above.body.error.code).toBe('cap_above_ceiling');

    const noCap = await call(url, 'PATCH', `/admin/v1/organizations/${pro.body.id}`, { ...adminOptions, body: { daily_send_cap: 0 } });
    expect(noCap.body.effective_daily_send_cap).toBeNull();
    const upgraded = await call(url, 'PATCH', `/admin/v1/organizations/${free.body.id}`, { ...adminOptions, body: { plan: 'pro', daily_send_cap: 5000 } });
    expect(upgraded.body).toMatchObject({ plan: 'pro', effective_daily_send_cap: 5000 });
  });

  it('refuses bad organizations and changes nothing', async () => {
    // Names of their own: other files create organizations in the same database meanwhile.
    const name = `refused-${Math.random().toString(36).slice(2)}`;
    for (const body of [{ name, plan: 'gold' }, { name: '', plan: 'free' }, { name, plan: 'free', extra: 1 }, { name, plan: 'free', daily_send_cap: -1 }, { name, plan: 'free', daily_send_cap: 500 }]) {
      const res = await call(url, 'POST', '/admin/v1/organizations', { ...adminOptions, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    // A nullable field's error is its own rule alone, not also the union's "must be null".
    const negative = await call(url, 'POST', '/admin/v1/organizations', { ...adminOptions, body: { name, plan: 'pro', daily_send_cap: -1 } });
    expect(negative.body.error.details).toEqual([{ path: '/daily_send_cap', message: 'must be >= 0' }]);
    const names = (await call(url, 'GET', '/admin/v1/organizations', adminOptions)).body.data.map((o: { name: string }) => o.name);
    expect(names.filter((n: string) => n === name || n === '')).toEqual([]);
    expect((await call(url, 'POST', '/admin/v1/organizations', { body: { name: 'x', plan: 'free' } })).status).toBe(401);
    expect((await call(url, 'PATCH', '/admin/v1/organizations/00000000-0000-0000-0000-000000000000', { ...adminOptions, body: { plan: 'pro' } })).status).toBe(404);
  });
});

describe('mail API keys', () => {
  it('are shown once, listed without secrets, and stop working when revoked', async () => {
    const { organizationId, key, keyId } = await organizationWithKey(url);
    expect(key).toMatch(/^mk_live_[0-9A-Za-z]{32}$/);
    const list = await call(url, 'GET', `/admin/v1/organizations/${organizationId}/keys`, adminOptions);
    expect(list.body.data).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain(key);
    expect(list.body.data[0]).toMatchObject({ id: keyId, kind: 'full', domains: null, rate_limit: null, prefix: key.slice(0, 12) });

    expect((await call(url, 'GET', '/api/v1/domains', { key })).status).toBe(200);
    expect((await call(url, 'DELETE', `/admin/v1/organizations/${organizationId}/keys/${keyId}`, adminOptions)).body.revoked_at).not.toBeNull();
    const revoked = await call(url, 'GET', '/api/v1/domains', { key });
    expect(revoked.status).toBe(401);
    // Resend's error fields at the top, the platform's error object inside.
    expect(revoked.body).toMatchObject({ statusCode: 401, name: 'invalid_api_key', error: { code: 'invalid_api_key' } });
    expect(revoked.body.message).toBe(revoked.body.error.message);
  });

  it('refuses bad key requests', async () => {
    const { organizationId } = await organizationWithKey(url);
    for (const body of [{ name: 'k', kind: 'admin' }, { name: 'k', kind: 'full', rate_limit: 0 }, { name: 'k', kind: 'full', rate_limit: 1001 }, { name: 'k', kind: 'send', domains: ['not a domain'] }, { name: 'k', kind: 'send', domains: [] }, { name: 'k', kind: 'send', scopes: [] }]) {
      const res = await call(url, 'POST', `/admin/v1/organizations/${organizationId}/keys`, { ...adminOptions, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await call(url, 'GET', `/admin/v1/organizations/${organizationId}/keys`, adminOptions)).body.data).toHaveLength(1);
  });

  it('missing and malformed keys get 401 with stable codes; a links key is not a mail key', async () => {
    expect((await call(url, 'GET', '/api/v1/domains')).body.name).toBe('missing_api_key');
    expect((await call(url, 'GET', '/api/v1/domains', { key: 'mk_live_nope' })).body.name).toBe('invalid_api_key');
    const links = await workspaceWithKey(url);
    expect((await call(url, 'GET', '/api/v1/domains', { key: links.key })).status).toBe(401);
  });

  it('deny by default: send and test keys cannot manage domains', async () => {
    const { organizationId } = await organizationWithKey(url);
    for (const kind of ['send', 'test'] as const) {
      const { key } = await mailKey(url, organizationId, { kind });
      const res = await call(url, 'POST', '/api/v1/domains', { key, body: { name: freshDomain() } });
      expect(res.status).toBe(403);
      expect(res.body.name).toBe('insufficient_permissions');
      expect((await call(url, 'GET', '/api/v1/domains', { key })).status).toBe(403);
    }
  });
});

describe('sending domains', () => {
  it('get a DKIM key pair and records, verify through an operator, list with cursors', async () => {
    const { key } = await organizationWithKey(url);
    const name = freshDomain();
    const created = await call(url, 'POST', '/api/v1/domains', { key, body: { name: name.toUpperCase(), tracking_host: 'Track.Example.com' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'domain', name, status: 'pending', tracking_host: 'track.example.com', verified_at: null });
    const dkim = created.body.records.find((r: { record: string }) => r.record === 'dkim');
    expect(dkim.name).toMatch(new RegExp(`^lm[0-9a-f]{10}\\._domainkey\\.${name.replace(/\./g, '\\.')}$`));
    expect(dkim.value).toMatch(/^v=DKIM1; k=rsa; p=MIIBIjAN[A-Za-z0-9+/=]+$/);

    expect((await call(url, 'POST', '/api/v1/domains', { key, body: { name } })).body.name).toBe('domain_exists');
    const verified = await call(url, 'POST', `/admin/v1/domains/${created.body.id}/verify`, adminOptions);
    expect(verified.body).toMatchObject({ status: 'verified' });
    expect(verified.body.verified_at).not.toBeNull();

    for (let i = 0; i < 3; i++) await call(url, 'POST', '/api/v1/domains', { key, body: { name: freshDomain() } });
    const first = await call(url, 'GET', '/api/v1/domains?limit=3', { key });
    expect(first.body).toMatchObject({ object: 'list', has_more: true });
    expect(first.body.data).toHaveLength(3);
    const second = await call(url, 'GET', `/api/v1/domains?limit=3&cursor=${first.body.next_cursor}`, { key });
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.body.data.map((d: { name: string }) => d.name)).toEqual([name]);
    expect((await call(url, 'GET', '/api/v1/domains?cursor=bogus', { key })).body.name).toBe('invalid_cursor');

    const changed = await call(url, 'PATCH', `/api/v1/domains/${created.body.id}`, { key, body: { tracking_host: null } });
    expect(changed.body.tracking_host).toBeNull();
    expect((await call(url, 'DELETE', `/api/v1/domains/${created.body.id}`, { key })).status).toBe(200);
    expect((await call(url, 'GET', `/api/v1/domains/${created.body.id}`, { key })).status).toBe(404);
  });

  it('refuses bad domains and unknown fields, storing nothing', async () => {
    const { key } = await organizationWithKey(url);
    for (const body of [{ name: 'localhost' }, { name: 'a..b.com' }, { name: '-x.com' }, { name: 'x.com', tracking_host: 'bad host' }, { name: 'x.com', dkim: true }, {}]) {
      const res = await call(url, 'POST', '/api/v1/domains', { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.statusCode).toBe(400);
    }
    expect((await call(url, 'GET', '/api/v1/domains', { key })).body.data).toEqual([]);
  });

  it('are isolated between organizations and restricted keys see only their domains', async () => {
    const a = await organizationWithKey(url);
    const b = await organizationWithKey(url);
    const mine = await verifiedDomain(url, a.key);
    const other = await verifiedDomain(url, a.key);
    expect((await call(url, 'GET', `/api/v1/domains/${mine.id}`, { key: b.key })).status).toBe(404);
    expect((await call(url, 'DELETE', `/api/v1/domains/${mine.id}`, { key: b.key })).status).toBe(404);
    expect((await call(url, 'GET', '/api/v1/domains', { key: b.key })).body.data).toEqual([]);

    const restricted = await mailKey(url, a.organizationId, { kind: 'full', domains: [mine.name.toUpperCase()] });
    const seen = await call(url, 'GET', '/api/v1/domains', { key: restricted.key });
    expect(seen.body.data.map((d: { id: string }) => d.id)).toEqual([mine.id]);
    expect((await call(url, 'GET', `/api/v1/domains/${other.id}`, { key: restricted.key })).status).toBe(404);
    expect((await call(url, 'GET', `/api/v1/domains/${mine.id}`, { key: restricted.key })).status).toBe(200);
    const outside = await call(url, 'POST', '/api/v1/domains', { key: restricted.key, body: { name: freshDomain() } });
    expect(outside.status).toBe(403);
    expect(outside.body.name).toBe('domain_not_allowed');
  });
});
