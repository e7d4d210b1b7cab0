// POST /api/v1/domains/:id/verify checks the DKIM record through a real DNS server.
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { freshDomain, organizationWithKey } from '../../support/mail/organizations.ts';
import { startTestDns, type TestDns } from '../../support/mail/dns-server.ts';

let dns: TestDns;
/** A TXT value as a zone file holds it: strings of at most 255 bytes. */
const strings = (value: string) => value.match(/.{1,255}/g)!;
let ingress: TestIngress;
let url: string;

beforeAll(async () => {
  dns = await startTestDns();
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000', MAIL_DNS_SERVERS: dns.server });
  url = ingress.url;
});
afterAll(async () => {
  await ingress?.close();
  await dns?.close();
});

describe('domain verification through DNS', () => {
  it('verifies a domain whose DKIM record carries its key (split into strings, spaced), and sends from it', async () => {
    const { key } = await organizationWithKey(url);
    const created = await call(url, 'POST', '/api/v1/domains', { key, body: { name: freshDomain() } });
    const dkim = created.body.records[0];
    const before = await call(url, 'POST', '/emails', { key, body: { from: `a@${created.body.name}`, to: 'x@example.com', subject: 's', text: 't' } });
    expect(before.body.error.code).toBe('from_domain_not_verified');

    const value: string = dkim.value;
    dns.txt.set(dkim.name, [[value.slice(0, 200), value.slice(200).replace('; p=', ';  p = ')]]);
    const verified = await call(url, 'POST', `/api/v1/domains/${created.body.id}/verify`, { key });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ dkim: 'verified', domain: { status: 'verified' } });
    expect((await call(url, 'POST', '/emails', { key, body: { from: `a@${created.body.name}`, to: 'x@example.com', subject: 's', text: 't' } })).status).toBe(200);
  });

  it('keeps a verified domain whose record is gone sending as temporary_failure for 72 hours of checks, then fails it (Resend, through its SDK)', async () => {
    const { key, organizationId } = await organizationWithKey(url);
    process.env.RESEND_BASE_URL = url;
    const resend = new Resend(key);
    const created = (await resend.domains.create({ name: freshDomain() })).data!;
    const record = created.records[0]!;
    const send = () => resend.emails.send({ from: `a@${created.name}`, to: 'x@example.com', subject: 's', text: 't' });
    dns.txt.set(`${record.name}.${created.name}`, [strings(record.value)]);
    expect((await resend.domains.verify(created.id)).error).toBeNull();
    expect((await resend.domains.get(created.id)).data!.status).toBe('verified');

    dns.txt.delete(`${record.name}.${created.name}`);
    expect((await resend.domains.verify(created.id)).error).toBeNull();
    expect((await resend.domains.get(created.id)).data!.status).toBe('temporary_failure');
    expect((await send()).error).toBeNull();
    // Checked again within the 72 hours: still temporary_failure, still sending.
    await ingress.platform.pg.query("UPDATE mail_domains SET failing_since = now() - interval '71 hours' WHERE id = $1", [created.id]);
    expect((await call(url, 'POST', `/api/v1/domains/${created.id}/verify`, { key })).body.domain.status).toBe('temporary_failure');
    expect((await send()).error).toBeNull();
    // Past them: a check fails it, and it sends no more.
    await ingress.platform.pg.query("UPDATE mail_domains SET failing_since = now() - interval '73 hours' WHERE id = $1", [created.id]);
    expect((await call(url, 'POST', `/api/v1/domains/${created.id}/verify`, { key })).body.domain.status).toBe('failed');
    const refused = await send();
    expect((refused.error as any).error.code).toBe('from_domain_not_verified');
    // A record found again verifies it anew; a domain never verified fails at once.
    dns.txt.set(`${record.name}.${created.name}`, [strings(record.value)]);
    expect((await call(url, 'POST', `/api/v1/domains/${created.id}/verify`, { key })).body.domain.status).toBe('verified');
    const fresh = (await resend.domains.create({ name: freshDomain() })).data!;
    expect((await call(url, 'POST', `/api/v1/domains/${fresh.id}/verify`, { key })).body.domain.status).toBe('failed');
    expect(organizationId).toBeTruthy();
  });

  it('fails a domain whose record is missing or carries another key; a failed lookup changes nothing', async () => {
    const { key } = await organizationWithKey(url);
    const created = await call(url, 'POST', '/api/v1/domains', { key, body: { name: freshDomain() } });
    const missing = await call(url, 'POST', `/api/v1/domains/${created.body.id}/verify`, { key });
    expect(missing.body).toMatchObject({ dkim: 'missing', domain: { status: 'failed' } });

    const other = await call(url, 'POST', '/api/v1/domains', { key, body: { name: freshDomain() } });
    dns.txt.set(created.body.records[0].name, [strings(other.body.records[0].value)]);
    const mismatch = await call(url, 'POST', `/api/v1/domains/${created.body.id}/verify`, { key });
    expect(mismatch.body).toMatchObject({ dkim: 'mismatch', domain: { status: 'failed' } });

    dns.txt.set(created.body.records[0].name, [strings(created.body.records[0].value)]);
    expect((await call(url, 'POST', `/api/v1/domains/${created.body.id}/verify`, { key })).body.domain.status).toBe('verified');
    dns.silent = true;
    try {
      const timeout = await call(url, 'POST', `/api/v1/domains/${created.body.id}/verify`, { key });
      expect(timeout.status).toBe(200);
      expect(timeout.body).toMatchObject({ dkim: 'lookup_failed', domain: { status: 'verified' } });
    } finally {
      dns.silent = false;
    }
    const stranger = await organizationWithKey(url);
    expect((await call(url, 'POST', `/api/v1/domains/${created.body.id}/verify`, { key: stranger.key })).status).toBe(404);
  });
});
