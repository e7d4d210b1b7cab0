// Branded link domains over real HTTP against the real stack: adding a domain and
// its DNS records, verification through a real DNS server and by an operator, links
// on domains (the same short ID on two of them), redirects resolved by Host, two
// workspaces side by side, the default domain, deletion while links use it.
import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, client, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { DESKTOP_UA, scansStored, scanSink } from '../../support/links/scans.ts';
import { hostWorkers } from '../../../src/platform/actors/host.ts';
import { eventually, testConfig } from '../../support/env.ts';
import { decodeQr } from '../../support/links/decode.ts';
import { startTestDns, type TestDns } from '../../support/mail/dns-server.ts';

let dns: TestDns;
let ingress: TestIngress;
let url: string;

beforeAll(async () => {
  dns = await startTestDns();
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', LINK_DNS_SERVERS: dns.server, LINK_DOMAIN_A_TARGETS: '203.0.113.7' });
  url = ingress.url;
});
afterAll(async () => {
  await ingress?.close();
  await dns?.close();
});

/** A domain name no other test uses. */
const freshDomain = () => `go-${randomBytes(4).toString('hex')}.example.com`;

/** GET /<path> with this Host header, following nothing. */
function scanOn(host: string, path: string, headers: Record<string, string> = {}, base = url): Promise<{ status: number; location: string | undefined; body: string }> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: `/${path}`, headers: { host, 'user-agent': DESKTOP_UA, 'x-forwarded-for': freshIp(), accept: 'application/json', ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const admin = (path: string) => call(url, 'POST', path, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

/** A workspace with a verified domain of its own (verified by the operator). */
async function workspaceWithDomain() {
  const ws = await workspaceWithKey(url);
  const api = client(url, ws.key);
  const name = freshDomain();
  const domain = await api.post('/api/v1/link-domains', { name });
  expect(domain.status).toBe(201);
  expect((await admin(`/admin/v1/link-domains/${domain.body.id}/verify`)).status).toBe(200);
  return { ...ws, api, name, domain: domain.body };
}

describe('link domains', () => {
  it('adds a domain with the DNS records to publish, lists, gets and refuses bad input with stable codes', async () => {
    const { key } = await workspaceWithKey(url);
    const api = client(url, key);
    const name = freshDomain();
    const created = await api.post('/api/v1/link-domains', { name: name.toUpperCase() });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'link_domain', name, status: 'pending', isDefault: false, verifiedAt: null });
    const records = created.body.records;
    expect(records[0]).toMatchObject({ record: 'verification', type: 'TXT', name: `_svc-verify.${name}` });
    expect(records[0].value).toMatch(/^svc-verify=[A-Za-z0-9_-]{24}$/);
    expect(records).toContainEqual({ record: 'routing', type: 'CNAME', name, value: '127.0.0.1' });
    expect(records).toContainEqual({ record: 'routing', type: 'A', name, value: '203.0.113.7' });

    expect((await api.get(`/api/v1/link-domains/${created.body.id}`)).body).toEqual(created.body);
    expect((await api.get('/api/v1/link-domains')).body).toMatchObject({ object: 'list', data: [{ id: created.body.id }] });

    const again = await api.post('/api/v1/link-domains', { name });
    expect([again.status, again.body.error.code]).toEqual([409, 'domain_exists']);
    for (const bad of [{ name: 'localhost' }, { name: 'no spaces.example.com' }, { name: '' }, { name: 'x'.repeat(300) + '.com' }, { name: 42 }, {}, { name, extra: 1 }]) {
      const res = await api.post('/api/v1/link-domains', bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(['validation_failed', 'unknown_field']).toContain(res.body.error.code);
    }
    const reserved = await api.post('/api/v1/link-domains', { name: 'localhost.' });
    expect(reserved.status).toBe(400);
    expect((await api.post('/api/v1/link-domains', { name: '127.0.0.1' })).status).toBe(400);
    expect((await api.patch(`/api/v1/link-domains/${created.body.id}`, { isDefault: 'yes' })).body.error.code).toBe('validation_failed');
    expect((await api.get('/api/v1/link-domains/not-a-uuid')).status).toBe(404);

    const stranger = client(url, (await workspaceWithKey(url)).key);
    expect((await stranger.get(`/api/v1/link-domains/${created.body.id}`)).status).toBe(404);
    expect((await stranger.delete(`/api/v1/link-domains/${created.body.id}`)).status).toBe(404);
    expect((await stranger.post(`/api/v1/link-domains/${created.body.id}/verify`)).status).toBe(404);
  });

  it('verifies a domain through DNS (missing, another value, then the right one); a second workspace cannot verify the same name', async () => {
    const { key } = await workspaceWithKey(url);
    const api = client(url, key);
    const name = freshDomain();
    const created = (await api.post('/api/v1/link-domains', { name })).body;
    const missing = await api.post(`/api/v1/link-domains/${created.id}/verify`);
    expect(missing.status).toBe(200);
    expect(missing.body).toMatchObject({ txt: 'missing', domain: { status: 'failed' } });

    dns.txt.set(`_svc-verify.${name}`, [['svc-verify=someone-else']]);
    expect((await api.post(`/api/v1/link-domains/${created.id}/verify`)).body).toMatchObject({ txt: 'mismatch', domain: { status: 'failed' } });

    // A squatter may add the name while it is unverified, but not verify it after its owner.
    const squatter = client(url, (await workspaceWithKey(url)).key);
    const squatted = await squatter.post('/api/v1/link-domains', { name });
    expect(squatted.status).toBe(201);

    dns.txt.set(`_svc-verify.${name}`, [['v=spf1 -all'], [created.records[0].value.slice(0, 10), created.records[0].value.slice(10)]]);
    const verified = await api.post(`/api/v1/link-domains/${created.id}/verify`);
    expect(verified.body).toMatchObject({ txt: 'verified', domain: { status: 'verified' } });
    expect(verified.body.domain.verifiedAt).not.toBeNull();

    dns.txt.set(`_svc-verify.${name}`, [[squatted.body.records[0].value]]);
    const taken = await squatter.post(`/api/v1/link-domains/${squatted.body.id}/verify`);
    expect([taken.status, taken.body.error.code]).toEqual([409, 'domain_taken']);
    expect((await admin(`/admin/v1/link-domains/${squatted.body.id}/verify`)).body.error.code).toBe('domain_taken');
    expect((await squatter.post('/api/v1/link-domains', { name })).body.error.code).toBe('domain_taken');
    expect((await client(url, (await workspaceWithKey(url)).key).post('/api/v1/link-domains', { name })).body.error.code).toBe('domain_taken');

    // The record may go once verified: the domain stays verified.
    dns.txt.delete(`_svc-verify.${name}`);
    expect((await api.post(`/api/v1/link-domains/${created.id}/verify`)).body).toMatchObject({ txt: 'missing', domain: { status: 'verified' } });
  });

  it('the operator verify needs the admin token', async () => {
    const { key } = await workspaceWithKey(url);
    const created = (await client(url, key).post('/api/v1/link-domains', { name: freshDomain() })).body;
    expect((await call(url, 'POST', `/admin/v1/link-domains/${created.id}/verify`)).status).toBe(401);
    expect((await call(url, 'POST', `/admin/v1/link-domains/${created.id}/verify`, { key })).status).toBe(401);
    expect((await admin('/admin/v1/link-domains/00000000-0000-4000-8000-000000000000/verify')).status).toBe(404);
    const verified = await admin(`/admin/v1/link-domains/${created.id}/verify`);
    expect(verified.body).toMatchObject({ id: created.id, status: 'verified' });
  });

  it('serves the same short ID on two domains, each its own link, and only on verified domains', async () => {
    const { api, name } = await workspaceWithDomain();
    const shortId = `same-${randomBytes(3).toString('hex')}`;
    const onBase = await api.post('/api/v1/links', { destination: 'https://example.com/base', shortId });
    expect(onBase.status).toBe(201);
    expect(onBase.body).toMatchObject({ domain: '127.0.0.1', shortUrl: `http://127.0.0.1:3000/${shortId}` });
    const onBrand = await api.post('/api/v1/links', { destination: 'https://example.com/brand', shortId, domain: name.toUpperCase() });
    expect(onBrand.status).toBe(201);
    expect(onBrand.body).toMatchObject({ domain: name, shortUrl: `https://${name}/${shortId}` });
    const taken = await api.post('/api/v1/links', { destination: 'https://example.com/x', shortId, domain: name });
    expect([taken.status, taken.body.error.code]).toEqual([409, 'short_id_taken']);

    expect((await scanOn(name, shortId)).location).toMatch(/^https:\/\/example\.com\/brand\?svc_cid=/);
    expect((await scanOn(`${name}:443`, shortId)).location).toMatch(/^https:\/\/example\.com\/brand\?svc_cid=/);
    expect((await scanOn('127.0.0.1:3000', shortId)).location).toMatch(/^https:\/\/example\.com\/base\?svc_cid=/);
    expect((await scanOn('localhost', shortId)).location).toMatch(/^https:\/\/example\.com\/base\?svc_cid=/);

    // An unknown host answers 404, whatever the short ID.
    const unknown = await scanOn('nobody.example.org', shortId);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).error.code).toBe('not_found');

    // A link of the base domain is not on the branded one, and the reverse.
    const baseOnly = (await api.post('/api/v1/links', { destination: 'https://example.com/base-only' })).body;
    expect((await scanOn(name, baseOnly.shortId)).status).toBe(404);
    const brandOnly = (await api.post('/api/v1/links', { destination: 'https://example.com/brand-only', domain: name })).body;
    expect((await scanOn('127.0.0.1', brandOnly.shortId)).status).toBe(404);
    expect((await scanOn(name, brandOnly.shortId)).status).toBe(302);

    // Listing by domain; getting shows the domain.
    const listed = await api.get(`/api/v1/links?domain=${name}&limit=100`);
    expect(listed.body.data.map((l: { id: string }) => l.id).sort()).toEqual([onBrand.body.id, brandOnly.id].sort());
    const listedBase = await api.get('/api/v1/links?domain=127.0.0.1&limit=100');
    expect(listedBase.body.data.map((l: { id: string }) => l.id).sort()).toEqual([onBase.body.id, baseOnly.id].sort());
    expect((await api.get(`/api/v1/links/${onBrand.body.id}`)).body).toMatchObject({ domain: name, shortUrl: `https://${name}/${shortId}` });
  });

  it('creates links on an unverified domain, which redirect once it is verified', async () => {
    const { key } = await workspaceWithKey(url);
    const api = client(url, key);
    const name = freshDomain();
    const domain = (await api.post('/api/v1/link-domains', { name })).body;
    const link = await api.post('/api/v1/links', { destination: 'https://example.com/soon', domain: name });
    expect(link.status).toBe(201);
    expect((await scanOn(name, link.body.shortId)).status).toBe(404);
    await admin(`/admin/v1/link-domains/${domain.id}/verify`);
    expect((await scanOn(name, link.body.shortId)).location).toMatch(/^https:\/\/example\.com\/soon\?svc_cid=/);
  });

  it('keeps two workspaces apart: one\'s domain never resolves the other\'s links', async () => {
    const [a, b] = await Promise.all([workspaceWithDomain(), workspaceWithDomain()]);
    const shortId = `menu-${randomBytes(3).toString('hex')}`;
    expect((await a.api.post('/api/v1/links', { destination: 'https://a.example.net/menu', shortId, domain: a.name })).status).toBe(201);
    expect((await b.api.post('/api/v1/links', { destination: 'https://b.example.net/menu', shortId, domain: b.name })).status).toBe(201);
    const onlyA = (await a.api.post('/api/v1/links', { destination: 'https://a.example.net/only', domain: a.name })).body;
    const onlyABase = (await a.api.post('/api/v1/links', { destination: 'https://a.example.net/base' })).body;

    expect((await scanOn(a.name, shortId)).location).toMatch(/^https:\/\/a\.example\.net\/menu\?/);
    expect((await scanOn(b.name, shortId)).location).toMatch(/^https:\/\/b\.example\.net\/menu\?/);
    expect((await scanOn(b.name, onlyA.shortId)).status).toBe(404);
    expect((await scanOn(b.name, onlyABase.shortId)).status).toBe(404);

    // B cannot put links on A's domain, nor see them.
    const foreign = await b.api.post('/api/v1/links', { destination: 'https://b.example.net/x', domain: a.name });
    expect([foreign.status, foreign.body.error.code]).toEqual([400, 'domain_not_found']);
    expect((await b.api.get(`/api/v1/links?domain=${a.name}`)).body.data).toEqual([]);
  });

  it('puts new links on the workspace\'s default domain; the base host names the base domain', async () => {
    const { api, name, domain } = await workspaceWithDomain();
    const other = (await api.post('/api/v1/link-domains', { name: freshDomain(), isDefault: true })).body;
    expect(other.isDefault).toBe(true);
    const made = await api.patch(`/api/v1/link-domains/${domain.id}`, { isDefault: true });
    expect(made.body.isDefault).toBe(true);
    expect((await api.get(`/api/v1/link-domains/${other.id}`)).body.isDefault).toBe(false);
    expect((await api.get('/api/v1/link-domains')).body.data[0].id).toBe(domain.id);

    const byDefault = (await api.post('/api/v1/links', { destination: 'https://example.com/default' })).body;
    expect(byDefault.domain).toBe(name);
    const onBase = (await api.post('/api/v1/links', { destination: 'https://example.com/base', domain: '127.0.0.1' })).body;
    expect(onBase.domain).toBe('127.0.0.1');
    const bulk = await api.post('/api/v1/links/bulk', { operations: [
      { action: 'create', link: { destination: 'https://example.com/b1' } },
      { action: 'create', link: { destination: 'https://example.com/b2', domain: other.name } },
      { action: 'create', link: { destination: 'https://example.com/b3', domain: 'unknown.example.com' } },
      { action: 'create', link: { destination: 'https://example.com/b4', domain: 'not a host' } },
    ] });
    expect(bulk.body.results.map((r: { status: number; link?: { domain: string }; error?: { code: string } }) => r.link?.domain ?? r.error?.code))
      .toEqual([name, other.name, 'domain_not_found', 'validation_failed']);

    expect((await api.patch(`/api/v1/link-domains/${domain.id}`, { isDefault: false })).body.isDefault).toBe(false);
    expect((await api.post('/api/v1/links', { destination: 'https://example.com/none' })).body.domain).toBe('127.0.0.1');
    // The domain cannot be changed.
    expect((await api.patch(`/api/v1/links/${byDefault.id}`, { domain: other.name })).body.error.code).toBe('unknown_field');
  });

  it('refuses to delete a domain while active links use it; afterwards its links never redirect', async () => {
    const { api, name, domain } = await workspaceWithDomain();
    const link = (await api.post('/api/v1/links', { destination: 'https://example.com/kept', domain: name })).body;
    const refused = await api.delete(`/api/v1/link-domains/${domain.id}`);
    expect([refused.status, refused.body.error.code]).toEqual([409, 'domain_in_use']);
    expect((await scanOn(name, link.shortId)).status).toBe(302);

    expect((await api.delete(`/api/v1/links/${link.id}`)).status).toBe(200);
    const deleted = await api.delete(`/api/v1/link-domains/${domain.id}`);
    expect(deleted.status).toBe(200);
    expect((await api.get(`/api/v1/link-domains/${domain.id}`)).status).toBe(404);
    expect((await scanOn(name, link.shortId)).status).toBe(404);
    const back = await api.patch(`/api/v1/links/${link.id}`, { isActive: true });
    expect([back.status, back.body.error.code]).toEqual([400, 'domain_not_found']);
    expect((await api.get(`/api/v1/links/${link.id}`)).body).toMatchObject({ isActive: false, domain: name });

    // The name can be added again, as a new domain with its own links.
    const again = (await api.post('/api/v1/link-domains', { name })).body;
    expect(again.id).not.toBe(domain.id);
    await admin(`/admin/v1/link-domains/${again.id}/verify`);
    const reused = await api.post('/api/v1/links', { destination: 'https://example.com/new', shortId: link.shortId, domain: name });
    expect(reused.status).toBe(201);
    expect((await scanOn(name, link.shortId)).location).toMatch(/^https:\/\/example\.com\/new\?/);
  });

  it('filters analytics, the export and the MCP tools by domain; QR codes hold the short URL on the link\'s domain', async () => {
    const { api, name, workspaceId, key } = await workspaceWithDomain();
    const shortId = `qr-${randomBytes(3).toString('hex')}`;
    const brand = (await api.post('/api/v1/links', { destination: 'https://example.com/brand', shortId, domain: name })).body;
    const base = (await api.post('/api/v1/links', { destination: 'https://example.com/base', shortId })).body;
    for (let i = 0; i < 3; i++) expect((await scanOn(name, shortId)).status).toBe(302);
    expect((await scanOn('127.0.0.1', shortId)).status).toBe(302);
    const [runtime] = await hostWorkers(ingress.platform, [scanSink(ingress.platform)]);
    try {
      await eventually(() => scansStored(ingress.platform.clickhouse, workspaceId, 4), 60_000, 250);
    } finally {
      await runtime!.stop();
    }
    expect((await api.get('/api/v1/analytics')).body.totalScans).toBe(4);
    const onBrand = (await api.get(`/api/v1/analytics?domain=${name}`)).body;
    expect(onBrand.totalScans).toBe(3);
    expect((await api.get('/api/v1/analytics?domain=127.0.0.1')).body.totalScans).toBe(1);
    expect((await api.get('/api/v1/analytics?domain=other.example.com')).body.totalScans).toBe(0);
    const exported = await api.get(`/api/v1/analytics/export?format=json&domain=${name}`);
    expect(exported.body.map((r: { linkId: string }) => r.linkId)).toEqual([brand.id, brand.id, brand.id]);
    expect((await api.get('/api/v1/analytics/export?format=json&domain=127.0.0.1')).body.map((r: { linkId: string }) => r.linkId)).toEqual([base.id]);
    expect((await api.get('/api/v1/analytics?domain=%20')).status).toBe(200);
    // The funnel too, naming the domain it was narrowed to.
    expect((await api.get(`/api/v1/analytics/funnel?domain=${name.toUpperCase()}`)).body).toMatchObject({ scans: 3, domain: name });
    expect((await api.get('/api/v1/analytics/funnel?domain=127.0.0.1')).body).toMatchObject({ scans: 1, domain: '127.0.0.1' });
    expect((await api.get('/api/v1/analytics/funnel')).body).toMatchObject({ scans: 4, domain: null });

    // MCP: list_links and get_analytics take the domain.
    const mcp = (tool: string, args: Record<string, unknown>) => call(url, 'POST', '/api/mcp', {
      key, headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } },
    });
    const listed = await mcp('list_links', { domain: name });
    expect(listed.body.result.structuredContent.links.map((l: { id: string }) => l.id)).toEqual([brand.id]);
    const analytics = await mcp('get_analytics', { domain: name });
    expect(analytics.body.result.structuredContent.scans.total).toBe(3);
    const funnel = await mcp('get_funnel', { domain: name });
    expect(funnel.body.result.structuredContent).toMatchObject({ scans: 3, domain: name });
    const referrers = await mcp('get_referrers', { domain: '127.0.0.1' });
    expect(referrers.body.result.structuredContent).toMatchObject({ totalScans: 1, domain: '127.0.0.1' });
    const created = await mcp('create_link', { destination: 'https://example.com/mcp', domain: name });
    expect(created.body.result.structuredContent.link).toMatchObject({ domain: name });
    const refused = await mcp('create_link', { destination: 'https://example.com/mcp', domain: 'nope.example.com' });
    expect(refused.body.result.isError).toBe(true);
    expect(JSON.parse(refused.body.result.content[0].text).error.code).toBe('domain_not_found');

    // The QR code holds the link's short URL on its domain (with the QR marker), read back by a decoder.
    const png = async (body: Record<string, unknown>) => {
      const res = await fetch(`${url}/api/v1/qr`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-forwarded-for': freshIp() }, body: JSON.stringify({ format: 'png', ...body }) });
      expect(res.status).toBe(200);
      return decodeQr(Buffer.from(await res.arrayBuffer()));
    };
    expect(await png({ shortId, domain: name })).toBe(`https://${name}/${shortId}?qr`);
    expect(await png({ shortId })).toBe(`http://127.0.0.1:3000/${shortId}?qr`);
    expect((await api.post('/api/v1/qr', { shortId, domain: 'nope.example.com', format: 'svg' })).status).toBe(404);
    expect((await api.post('/api/v1/qr', { shortId, domain: 'not a domain', format: 'svg' })).body.error.code).toBe('validation_failed');
  });

  it('refuses link URLs on a verified branded domain of any workspace: they would redirect into the service', async () => {
    const { name } = await workspaceWithDomain();
    const api = client(url, (await workspaceWithKey(url)).key);
    for (const body of [{ destination: `https://${name}/x` }, { destination: 'https://example.com/', iosUrl: `http://${name.toUpperCase()}./x` }]) {
      const res = await api.post('/api/v1/links', body);
      expect([res.status, res.body.error.code]).toEqual([400, 'invalid_url']);
    }
    // Another port of the host is another service.
    expect((await api.post('/api/v1/links', { destination: `https://${name}:8443/x` })).status).toBe(201);
  });

  it('another ingress serves a newly verified domain within its revalidation interval, and reads a new link on it through from Postgres', async () => {
    // Its own topic prefix: it never reads this test's changelog, so only Postgres can tell it.
    const lagging = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', REDIRECT_REVALIDATE_MS: '300', TOPIC_PREFIX: `${testConfig().TOPIC_PREFIX}.lagging` });
    try {
      const { api, name } = await workspaceWithDomain();
      await eventually(async () => lagging.app.redirects.domains.resolve(name) !== undefined, 10_000, 100);
      // Its link revalidator, on the same 300 ms interval, would otherwise often find the new link
      // before the scan asks for it: stopped, only a read through Postgres can bring it.
      await lagging.app.redirects.revalidator.stop();
      const shortId = `late-${randomBytes(3).toString('hex')}`;
      const before = lagging.app.redirects.readThrough.queries;
      expect((await api.post('/api/v1/links', { destination: 'https://example.com/late', shortId, domain: name })).status).toBe(201);
      expect((await scanOn(name, shortId, {}, lagging.url)).location).toMatch(/^https:\/\/example\.com\/late\?svc_cid=/);
      expect(lagging.app.redirects.readThrough.queries).toBeGreaterThan(before);
      // The same short ID on the base domain is another link, missing there.
      expect((await scanOn('127.0.0.1', shortId, {}, lagging.url)).status).toBe(404);
    } finally {
      await lagging.close();
    }
  });
});
