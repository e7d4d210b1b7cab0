// A contact made for an address by what its reader does (a one-click unsubscribe, the preferences
// page) records contact.created like one made through the API, so webhooks and data teams see
// every contact (contacts.ts contactOfAddressCte: the one way to make a contact for an address).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkToken } from '../../../src/mail/tracking/tracking-links.ts';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';

let ingress: TestIngress;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
}, 60_000);
afterAll(async () => ingress?.close());

const createdEvents = async (organizationId: string, email: string) =>
  (await ingress.platform.pg.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM mail_events e JOIN mail_contacts c ON c.id = e.contact_id
      WHERE e.organization_id = $1 AND e.type = 'contact.created' AND c.email = $2`,
    [organizationId, email],
  )).rows[0]!.n;

describe('a contact made for an address', () => {
  it('by a one-click unsubscribe or a preferences page records contact.created once', async () => {
    const org = await organizationWithKey(ingress.url);
    const domain = await verifiedDomain(ingress.url, org.key);
    const topic = (await call(ingress.url, 'POST', '/api/v1/topics', { key: org.key, body: { slug: 'news', name: 'News', default_subscription: 'opt_in' } })).body;
    const sent = await call(ingress.url, 'POST', '/emails', { key: org.key, body: { from: `news@${domain.name}`, to: ['one@example.net', 'two@example.net'], subject: 'S', text: 'x', topic_id: topic.id } });
    expect(sent.status).toBe(200);
    const secret = ingress.platform.config.MAIL_LINK_SECRET as string;

    const oneClick = linkToken(secret, 'u', { m: sent.body.id, r: 'one@example.net', t: topic.id });
    for (let i = 0; i < 2; i++) expect((await fetch(`${ingress.url}/m/u/${oneClick}`, { method: 'POST' })).status).toBe(200);
    expect(await createdEvents(org.organizationId, 'one@example.net')).toBe(1);

    const page = linkToken(secret, 'u', { m: sent.body.id, r: 'two@example.net', t: topic.id });
    const saved = await fetch(`${ingress.url}/m/u/${page}/preferences`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `shown=${topic.id}` });
    expect(saved.status).toBe(303);
    expect(await createdEvents(org.organizationId, 'two@example.net')).toBe(1);
  });
});
