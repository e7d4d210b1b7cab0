// POST /api/v1/domains/:id/verify checks the DKIM record through a real DNS server.
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
