// A domain-restricted full key and /webhooks, two organizations side by side: an endpoint
// receives the mail of every domain of its organization, so a key restricted to one domain
// (POST /api-keys with domain_id) is refused at every webhook route with 403
// domain_restricted_key and changes nothing; the organization's unrestricted key is unaffected.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';

let ingress: TestIngress;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
}, 120_000);
afterAll(async () => ingress?.close());

/** An organization with two verified domains, a webhook made by its full key, and a full key restricted to its first domain. */
async function organizationWithRestrictedKey() {
  const { key } = await organizationWithKey(ingress.url);
  const [mine] = await Promise.all([verifiedDomain(ingress.url, key), verifiedDomain(ingress.url, key)]);
  const webhook = await call(ingress.url, 'POST', '/webhooks', { key, body: { endpoint: 'https://hooks.example.com/owner', events: ['email.delivered', 'contact.created'] } });
  expect(webhook.status).toBe(201);
  const restricted = await call(ingress.url, 'POST', '/api-keys', { key, body: { name: 'one domain', domain_id: mine!.id } });
  expect(restricted.status).toBe(201);
  return { key, restricted: restricted.body.token as string, webhookId: webhook.body.id as string, secret: webhook.body.signing_secret as string };
}

describe('/webhooks and a domain-restricted key', () => {
  it('refuses the restricted key at every webhook route with 403 domain_restricted_key, in each organization, and changes nothing', async () => {
    const [a, b] = await Promise.all([organizationWithRestrictedKey(), organizationWithRestrictedKey()]);
    for (const org of [a, b]) {
      const id = org.webhookId;
      const event = '00000000-0000-4000-8000-000000000000';
      const attempts: [string, string, unknown?][] = [
        ['GET', '/webhooks'],
        ['POST', '/webhooks', { endpoint: 'https://hooks.example.com/thief', events: ['email.delivered'] }],
        ['GET', `/webhooks/${id}`],
        ['PATCH', `/webhooks/${id}`, { endpoint: 'https://hooks.example.com/thief' }],
        ['POST', `/webhooks/${id}/signing-secret/rotate`],
        ['GET', `/webhooks/${id}/events`],
        ['GET', `/webhooks/${id}/events/${event}`],
        ['GET', `/webhooks/${id}/events/${event}/attempts`],
        ['POST', `/webhooks/${id}/events/${event}/replay`],
        ['DELETE', `/webhooks/${id}`],
      ];
      for (const [method, path, body] of attempts) {
        const res = await call(ingress.url, method, path, { key: org.restricted, body });
        expect({ method, path, status: res.status, code: res.body?.error?.code }).toEqual({ method, path, status: 403, code: 'domain_restricted_key' });
        expect(JSON.stringify(res.body)).not.toContain(org.secret);
      }
      // The owner's webhook is as it was, and the only one; the unrestricted key still manages it.
      const listed = await call(ingress.url, 'GET', '/webhooks', { key: org.key });
      expect(listed.status).toBe(200);
      expect(listed.body.data).toEqual([expect.objectContaining({ id, endpoint: 'https://hooks.example.com/owner', status: 'enabled' })]);
      const got = await call(ingress.url, 'GET', `/webhooks/${id}`, { key: org.key });
      expect(got.body.signing_secret).toBe(org.secret);
      expect((await call(ingress.url, 'PATCH', `/webhooks/${id}`, { key: org.key, body: { status: 'disabled' } })).status).toBe(200);
    }
    // Neither organization's key reaches the other's webhook.
    expect((await call(ingress.url, 'GET', `/webhooks/${a.webhookId}`, { key: b.key })).status).toBe(404);
    expect((await call(ingress.url, 'GET', `/webhooks/${b.webhookId}`, { key: a.key })).status).toBe(404);
  });
});
