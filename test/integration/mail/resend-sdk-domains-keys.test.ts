// Resend's SDK (unmodified, RESEND_BASE_URL at the test ingress) on domains and
// API keys at the root paths: each method's result is checked, not only that it
// answered; one organization never sees or touches another's.
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { ADMIN_TOKEN, call } from '../../support/ingress.ts';
import { useResendIngress } from '../../support/mail/resend-ingress.ts';
import { eventually } from '../../support/env.ts';
import { shadowedLinks } from '../../../src/links/redirect/shadowed-links-report.ts';
import { freshDomain, mailKey, nextSecond, organizationWithKey } from '../../support/mail/organizations.ts';
import { startTestDns, type TestDns } from '../../support/mail/dns-server.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

let dns: TestDns;
let resend: Resend;
let other: Resend;
let org: { organizationId: string; key: string };

beforeAll(async () => {
  dns = await startTestDns();
});
afterAll(async () => dns?.close());
const root = useResendIngress(() => ({ MAIL_DNS_SERVERS: dns.server }));
beforeAll(async () => {
  org = await organizationWithKey(root.url);
  resend = new Resend(org.key);
  other = new Resend((await organizationWithKey(root.url)).key);
});

describe('resend.domains', () => {
  it('creates a domain with Resend\'s options and answers its DKIM record; get, list, verify, update and remove it', async () => {
    const name = freshDomain();
    const created = await resend.domains.create({ name, region: 'eu-west-1', customReturnPath: 'bounces', tls: 'opportunistic', trackingSubdomain: 'links', openTracking: true, clickTracking: true });
    expect(created.error).toBeNull();
    const id = created.data!.id;
    expect(created.data).toMatchObject({ name, status: 'pending', region: 'eu-west-1', open_tracking: true, click_tracking: true, tracking_subdomain: 'links', capabilities: { sending: 'enabled', receiving: 'disabled' } });
    const dkim = created.data!.records[0]!;
    expect(dkim).toMatchObject({ record: 'DKIM', type: 'TXT', ttl: 'Auto', status: 'pending' });
    expect(dkim.name).toMatch(/^lm[0-9a-f]{10}\._domainkey$/);
    expect(dkim.value).toMatch(/^v=DKIM1; k=rsa; p=/);

    const got = await resend.domains.get(id);
    expect(got.data).toMatchObject({ object: 'domain', id, name, records: [dkim] });
    const listed = await resend.domains.list();
    expect(listed.data).toMatchObject({ object: 'list', has_more: false });
    expect(listed.data!.data.map((d) => d.id)).toEqual([id]);

    // The record published under the name Resend lists (relative to the domain): verify finds it.
    dns.txt.set(`${dkim.name}.${name}`, [dkim.value.match(/.{1,255}/g)!]);
    expect((await resend.domains.verify(id)).data).toEqual({ object: 'domain', id });
    expect((await resend.domains.get(id)).data!.status).toBe('verified');
    // The domain is usable for sending at once.
    expect((await resend.emails.send({ from: `a@${name}`, to: 'x@example.com', subject: 's', text: 't' })).error).toBeNull();

    expect((await resend.domains.update({ id, openTracking: false, clickTracking: false })).data).toEqual({ object: 'domain', id });
    expect((await resend.domains.get(id)).data).toMatchObject({ open_tracking: false, click_tracking: false, tracking_subdomain: null });
    // The /api/v1 face sees the same domain (one store).
    expect((await call(root.ingress.url, 'GET', `/api/v1/domains/${id}`, { key: org.key })).body).toMatchObject({ name, status: 'verified', tracking_host: null });

    expect((await resend.domains.remove(id)).data).toEqual({ object: 'domain', id, deleted: true });
    expect((await resend.domains.get(id)).error).toMatchObject({ name: 'not_found', statusCode: 404 });
  });

  it('refuses what it does not do with a 422 and Resend\'s names, and a missing name as missing_required_field', async () => {
    const split = await resend.domains.create({ name: freshDomain(), openTracking: true, clickTracking: false });
    expect(split.error).toMatchObject({ name: 'validation_error', statusCode: 422 });
    expect((split.error as any).error.code).toBe('tracking_split_not_supported');
    const enforced = await resend.domains.create({ name: freshDomain(), tls: 'enforced' });
    expect((enforced.error as any).error.code).toBe('tls_enforced_not_offered');
    const missing = await resend.domains.create({} as any);
    expect(missing.error).toMatchObject({ name: 'missing_required_field', statusCode: 422 });
    const bad = await resend.domains.create({ name: 'not a domain' });
    expect(bad.error).toMatchObject({ name: 'validation_error', statusCode: 400 });
    expect((await resend.domains.list()).data!.data).toEqual([]);
  });

  it('turns tracking on without a tracking subdomain, as Resend does: the links use this service\'s own host', async () => {
    const { key } = await organizationWithKey(root.url);
    const mine = new Resend(key);
    const serviceHost = new URL(root.ingress.platform.config.PUBLIC_BASE_URL).host;
    const made = await mine.domains.create({ name: freshDomain(), clickTracking: true, openTracking: true });
    expect(made.error).toBeNull();
    expect((await mine.domains.get(made.data!.id)).data).toMatchObject({ open_tracking: true, click_tracking: true });
    const later = (await mine.domains.create({ name: freshDomain() })).data!.id;
    expect((await mine.domains.update({ id: later, openTracking: true, clickTracking: true })).error).toBeNull();
    expect((await mine.domains.get(later)).data).toMatchObject({ open_tracking: true, click_tracking: true });
    expect((await call(root.url, 'GET', `/api/v1/domains/${later}`, { key })).body.tracking_host).toBe(serviceHost);
    // Off again, then a subdomain of its own.
    expect((await mine.domains.update({ id: later, openTracking: false, clickTracking: false })).error).toBeNull();
    expect((await mine.domains.get(later)).data).toMatchObject({ open_tracking: false, tracking_subdomain: null });
  });

  it('pages with limit, after and before', async () => {
    const { key } = await organizationWithKey(root.ingress.url);
    const client = new Resend(key);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.unshift((await client.domains.create({ name: freshDomain() })).data!.id);
    const first = await client.domains.list({ limit: 2 });
    expect(first.data).toMatchObject({ has_more: true });
    expect(first.data!.data.map((d) => d.id)).toEqual(ids.slice(0, 2));
    const second = await client.domains.list({ limit: 2, after: ids[1] });
    expect(second.data!.data.map((d) => d.id)).toEqual(ids.slice(2, 4));
    const last = await client.domains.list({ limit: 2, after: ids[3] });
    expect(last.data).toMatchObject({ has_more: false });
    expect(last.data!.data.map((d) => d.id)).toEqual([ids[4]]);
    const back = await client.domains.list({ limit: 2, before: ids[4] });
    expect(back.data!.data.map((d) => d.id)).toEqual(ids.slice(2, 4));
    expect(back.data!.has_more).toBe(true);
    const unknown = await client.domains.list({ after: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.error).toMatchObject({ name: 'validation_error', statusCode: 400 });
  });

  it('show a domain-restricted key only its domains', async () => {
    const { organizationId, key } = await organizationWithKey(root.ingress.url);
    const client = new Resend(key);
    const mine = (await client.domains.create({ name: freshDomain() })).data!;
    const other = (await client.domains.create({ name: freshDomain() })).data!;
    const { key: restrictedKey } = await mailKey(root.ingress.url, organizationId, { domains: [mine.name] });
    const restricted = new Resend(restrictedKey);
    expect((await restricted.domains.list()).data!.data.map((d) => d.id)).toEqual([mine.id]);
    expect((await restricted.domains.get(other.id)).error).toMatchObject({ name: 'not_found' });
    expect((await restricted.domains.remove(other.id)).error).toMatchObject({ name: 'not_found' });
    expect((await restricted.domains.create({ name: freshDomain() })).error).toMatchObject({ name: 'invalid_access', statusCode: 403 });
  });

  it('keeps each organization to its own domains', async () => {
    const mine = (await resend.domains.create({ name: freshDomain() })).data!;
    expect((await other.domains.get(mine.id)).error).toMatchObject({ name: 'not_found' });
    expect((await other.domains.remove(mine.id)).error).toMatchObject({ name: 'not_found' });
    expect((await other.domains.verify(mine.id)).error).toMatchObject({ name: 'not_found' });
    expect((await other.domains.update({ id: mine.id, openTracking: false })).error).toMatchObject({ name: 'not_found' });
    expect((await other.domains.list()).data!.data.map((d) => d.id)).not.toContain(mine.id);
    expect((await resend.domains.get(mine.id)).data!.id).toBe(mine.id);
  });
});

describe('resend.apiKeys', () => {
  it('creates a full key answering {id, token} that works, lists, renames and removes keys', async () => {
    const { organizationId, key } = await organizationWithKey(root.ingress.url);
    const client = new Resend(key);
    const created = await client.apiKeys.create({ name: 'deploys' });
    expect(created.error).toBeNull();
    expect(created.data!.token).toMatch(/^mk_live_[0-9A-Za-z]{32}$/);
    const made = new Resend(created.data!.token);
    // A full key: it manages the organization's resources.
    expect((await made.domains.list()).error).toBeNull();

    // last_used_at is written beside the request, not before its answer (mail-keys.ts): waited for, bounded.
    const listed = (await eventually(async () => {
      const page = await client.apiKeys.list();
      return page.data?.data[0]?.last_used_at ? page : undefined;
    }, 10_000))!;
    expect(listed.data!.object).toBe('list');
    expect(listed.data!.data[0]).toMatchObject({ id: created.data!.id, name: 'deploys', last_used_at: expect.any(String) });
    expect(listed.data!.data).toHaveLength(2);
    expect(Object.keys(listed.data!.data[0]!).sort()).toEqual(['created_at', 'id', 'last_used_at', 'name']);

    expect((await client.apiKeys.update(created.data!.id, { name: 'ci' })).data).toEqual({ object: 'api_key', id: created.data!.id });
    expect((await client.apiKeys.list()).data!.data[0]!.name).toBe('ci');

    expect((await client.apiKeys.remove(created.data!.id)).data).toEqual({ object: 'api_key', id: created.data!.id, deleted: true });
    // Resend's status for a revoked key: 403 (/emails keeps our 401).
    expect((await made.domains.list()).error).toMatchObject({ name: 'invalid_api_key', statusCode: 403 });
    expect((await client.apiKeys.list()).data!.data.map((k) => k.id)).not.toContain(created.data!.id);
    expect((await client.apiKeys.remove(created.data!.id)).error).toMatchObject({ name: 'not_found', statusCode: 404 });
    // The operator sees it revoked.
    const admin = await call(root.ingress.url, 'GET', `/admin/v1/organizations/${organizationId}/keys`, { headers: { authorization: 'Bearer test-admin-token' } });
    expect(admin.body.data.find((k: any) => k.id === created.data!.id).revoked_at).not.toBeNull();
  });

  it('makes a sending key restricted to a domain; a sending key may not manage keys (restricted_api_key)', async () => {
    const { key } = await organizationWithKey(root.ingress.url);
    const client = new Resend(key);
    const domain = (await client.domains.create({ name: freshDomain() })).data!;
    const sending = await client.apiKeys.create({ name: 'sender', permission: 'sending_access', domain_id: domain.id });
    const sender = new Resend(sending.data!.token);
    const refused = await sender.apiKeys.list();
    expect(refused.error).toMatchObject({ name: 'restricted_api_key', statusCode: 401 });
    expect((refused.error as any).error.code).toBe('insufficient_permissions');
    expect((await sender.apiKeys.create({ name: 'more' })).error).toMatchObject({ name: 'restricted_api_key' });
    expect((await sender.domains.list()).error).toMatchObject({ name: 'restricted_api_key' });
    // Restricted to its domain: another domain's From is refused.
    const elsewhere = await sender.emails.send({ from: 'a@elsewhere.example.com', to: 'x@example.com', subject: 's', text: 't' });
    expect(elsewhere.error).toMatchObject({ name: 'invalid_access', statusCode: 403 });
    expect((elsewhere.error as any).error.code).toBe('domain_not_allowed');
  });

  it('a domain-restricted full key only makes keys restricted to its domains', async () => {
    const full = new Resend((await organizationWithKey(root.ingress.url)).key);
    const domain = (await full.domains.create({ name: freshDomain() })).data!;
    const restricted = new Resend((await full.apiKeys.create({ name: 'one domain', domain_id: domain.id })).data!.token);
    const wider = await restricted.apiKeys.create({ name: 'everything' });
    expect(wider.error).toMatchObject({ name: 'invalid_access', statusCode: 403 });
    expect((await restricted.apiKeys.create({ name: 'same', domain_id: domain.id })).error).toBeNull();
  });

  it('a domain-restricted full key lists, renames and revokes only keys within its domains; keys it makes keep its rate limit', async () => {
    const owner = await organizationWithKey(root.ingress.url);
    const full = new Resend(owner.key);
    const mine = (await full.domains.create({ name: freshDomain() })).data!;
    const theirs = (await full.domains.create({ name: freshDomain() })).data!;
    const restrictedKey = await mailKey(root.ingress.url, owner.organizationId, { domains: [mine.name], rate_limit: 50 });
    const restricted = new Resend(restrictedKey.key);
    const inside = (await full.apiKeys.create({ name: 'inside', domain_id: mine.id })).data!;
    const outside = (await full.apiKeys.create({ name: 'outside', domain_id: theirs.id })).data!;
    const everything = (await full.apiKeys.create({ name: 'everything' })).data!;

    const seen = (await restricted.apiKeys.list()).data!.data.map((k) => k.id);
    expect(seen.sort()).toEqual([inside.id, restrictedKey.keyId].sort());
    for (const id of [outside.id, everything.id, owner.keyId]) {
      expect((await restricted.apiKeys.update(id, { name: 'taken' })).error, id).toMatchObject({ name: 'not_found' });
      expect((await restricted.apiKeys.remove(id)).error, id).toMatchObject({ name: 'not_found' });
    }
    expect((await full.apiKeys.list()).data!.data.map((k) => k.id)).toEqual(expect.arrayContaining([outside.id, everything.id, owner.keyId]));
    expect((await restricted.apiKeys.update(inside.id, { name: 'renamed' })).error).toBeNull();

    const made = (await restricted.apiKeys.create({ name: 'made', domain_id: mine.id })).data!;
    const { rows } = await root.ingress.platform.pg.query('SELECT rate_limit FROM mail_api_keys WHERE id = $1', [made.id]);
    expect(rows[0].rate_limit).toBe(50);
  });

  it('keeps each organization to its own keys', async () => {
    const mine = (await resend.apiKeys.create({ name: 'mine' })).data!;
    expect((await other.apiKeys.remove(mine.id)).error).toMatchObject({ name: 'not_found' });
    expect((await other.apiKeys.update(mine.id, { name: 'taken' })).error).toMatchObject({ name: 'not_found' });
    expect((await other.apiKeys.list()).data!.data.map((k) => k.id)).not.toContain(mine.id);
    const foreignDomain = (await other.domains.create({ name: freshDomain() })).data!;
    expect((await resend.apiKeys.create({ name: 'x', domain_id: foreignDomain.id })).error).toMatchObject({ name: 'not_found' });
    expect((await new Resend(mine.token).domains.list()).error).toBeNull();
  });
});

describe('the root paths', () => {
  it('are reserved: no short link may take them, and they answer JSON errors, not the link product\'s 404', async () => {
    const { key: linkKey } = await workspaceWithKey(root.ingress.url);
    for (const shortId of ['domains', 'api-keys', 'contacts', 'contact-properties', 'segments', 'topics', 'templates', 'broadcasts', 'suppressions']) {
      const link = await call(root.ingress.url, 'POST', '/api/v1/links', { key: linkKey, body: { destination: 'https://example.com/', shortId } });
      expect(link.status, shortId).toBe(400);
      expect(link.body.error.code).toBe('short_id_reserved');
    }
    // Paths of the SDK this service does not offer answer Resend's not_found, not the link product's HTML 404.
    for (const answer of [await resend.automations.list(), await resend.automations.create({ name: 'x', steps: [], connections: [] } as any), await resend.logs.list(), await resend.usage.get(), await resend.events.list(),
      await resend.oauthGrants.list(), await resend.oauthGrants.revoke('00000000-0000-4000-8000-000000000000')]) {
      expect(answer.error).toMatchObject({ name: 'not_found', statusCode: 404 });
      expect((answer.error as any).error.code).toBe('not_offered');
    }
    const usageLink = await call(root.ingress.url, 'POST', '/api/v1/links', { key: linkKey, body: { destination: 'https://example.com/', shortId: 'usage' } });
    expect(usageLink.body.error.code).toBe('short_id_reserved');
    const noKey = await fetch(`${root.ingress.url}/domains`);
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ name: 'missing_api_key', statusCode: 401 });
  });

  it('still serve a short link made before its ID became a root path: on a branded domain, and on the base domain to a visitor without a key; listed at start', async () => {
    const { pg } = root.ingress.platform;
    const ws = await workspaceWithKey(root.ingress.url);
    const host = `go-${randomBytes(4).toString('hex')}.example.com`;
    const linkDomain = await call(root.ingress.url, 'POST', '/api/v1/link-domains', { key: ws.key, body: { name: host } });
    expect((await call(root.ingress.url, 'POST', `/admin/v1/link-domains/${linkDomain.body.id}/verify`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);
    const made = async (body: object) => (await call(root.ingress.url, 'POST', '/api/v1/links', { key: ws.key, body: { shortId: `old-${randomBytes(4).toString('hex')}`, ...body } })).body.id as string;
    const onBase = await made({ destination: 'https://example.com/base' });
    const onBranded = await made({ destination: 'https://example.com/branded', domain: host });
    // Made before the routes existed: their IDs are what /segments and /topics took later (a crashed run's leftover moved aside).
    await pg.query("UPDATE links SET short_id = 'moved-' || id WHERE domain_id IS NULL AND short_id = 'segments'");
    await pg.query("UPDATE links SET short_id = 'segments' WHERE id = $1", [onBase]);
    await pg.query("UPDATE links SET short_id = 'topics' WHERE id = $1", [onBranded]);
    /** GET /<path> with this Host, following nothing. */
    const get = (path: string, headers: Record<string, string>) => new Promise<{ status: number; location: string | undefined; type: string | undefined }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: new URL(root.ingress.url).port, path, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, type: res.headers['content-type'] }));
      });
      req.on('error', reject);
      req.end();
    });
    try {
      const key = { authorization: `Bearer ${org.key}` };
      // The base domain: a visitor follows the link, an API client with a key gets the resource.
      expect(await get('/segments', { host: new URL(root.ingress.url).host })).toMatchObject({ status: 302, location: expect.stringMatching(/^https:\/\/example\.com\/base/) });
      expect((await resend.segments.list()).data).toMatchObject({ object: 'list' });
      expect((await get('/segments', { host: new URL(root.ingress.url).host, ...key })).status).toBe(200);
      // A branded link domain serves links only: its /topics is the link, with a key or without, and a path it has no link for is the link product's 404.
      expect(await get('/topics', { host, ...key })).toMatchObject({ status: 302, location: expect.stringMatching(/^https:\/\/example\.com\/branded/) });
      expect(await get('/topics', { host })).toMatchObject({ status: 302 });
      expect(await get('/domains', { host })).toMatchObject({ status: 404, type: 'text/html; charset=utf-8' });
      // What the root.ingress names at start.
      const named = await shadowedLinks(pg, root.ingress.app.reservedPaths.list());
      expect(named).toEqual(expect.arrayContaining([{ short_id: 'segments', domain: null, workspace_id: ws.workspaceId }, { short_id: 'topics', domain: host, workspace_id: ws.workspaceId }]));
    } finally {
      await pg.query("UPDATE links SET short_id = 'moved-' || id WHERE id = ANY($1::uuid[])", [[onBase, onBranded]]);
    }
  });

  it('answer an API client at a path no resource or link has with Resend\'s JSON not_found, at any depth; a visitor gets the link page', async () => {
    const asked = await fetch(`${root.ingress.url}/nosuchresource`, { headers: { authorization: `Bearer ${(await organizationWithKey(root.ingress.url)).key}` } });
    expect([asked.status, asked.headers.get('content-type')]).toEqual([404, 'application/json; charset=utf-8']);
    expect(await asked.json()).toMatchObject({ statusCode: 404, name: 'not_found', message: 'No resource or link at /nosuchresource.', error: { code: 'not_found' } });
    // Through the SDK: not_found, not its "Internal server error" (application_error) of an HTML page.
    expect((await resend.get('/nosuchresource')).error).toMatchObject({ name: 'not_found', statusCode: 404 });
    // A deeper path no route serves: not_found too, the platform's code kept beside it; under /api/ the platform's body alone.
    expect((await resend.get('/broadcasts/0b8a3f1e-5d7c-4a51-9d27-1e0f6b3c2a90/no-such-part')).error).toMatchObject({ name: 'not_found', statusCode: 404, error: { code: 'route_not_found' } });
    const underApi = await fetch(`${root.ingress.url}/api/v1/no/such/route`, { headers: { authorization: `Bearer ${(await organizationWithKey(root.ingress.url)).key}` } });
    expect([underApi.status, Object.keys(await underApi.json())]).toEqual([404, ['error']]);
    const visitor = await fetch(`${root.ingress.url}/nosuchresource`);
    expect([visitor.status, visitor.headers.get('content-type')]).toEqual([404, 'text/html; charset=utf-8']);
  });

  it('answer a key over its requests per second with rate_limit_exceeded and Retry-After', async () => {
    const { key } = await organizationWithKey(root.ingress.url, { rate_limit: 1 });
    const client = new Resend(key);
    await nextSecond();
    // Three at once with a cap of one a second: they span at most two windows, so one at least is refused.
    const answers = await Promise.all([client.domains.list(), client.domains.list(), client.domains.list()]);
    const refused = answers.filter((a) => a.error);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused[0]!.error).toMatchObject({ name: 'rate_limit_exceeded', statusCode: 429 });
    expect((refused[0]!.error as any).error.code).toBe('rate_limited');
    expect(refused[0]!.headers).toMatchObject({ 'retry-after': '1', 'ratelimit-limit': '1', 'ratelimit-remaining': '0' });
  });

  it('carry the IETF rate-limit headers beside X-RateLimit-*', async () => {
    const res = await resend.domains.list();
    expect(res.headers!['ratelimit-limit']).toBe('1000');
    expect(Number(res.headers!['ratelimit-remaining'])).toBeGreaterThan(900);
    expect(Number(res.headers!['ratelimit-reset'])).toBeLessThanOrEqual(1);
    expect(res.headers!['x-ratelimit-limit']).toBe('1000');
  });
});
