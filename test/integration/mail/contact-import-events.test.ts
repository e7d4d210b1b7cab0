// An import publishes the contact events of each batch as it writes them, instead of leaving
// them to the outbox relay (which publishes what is older than 2 s, a few hundred a second): a
// large import would otherwise build a backlog that every organization's events wait behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { organizationWithKey } from '../../support/mail/organizations.ts';

let ingress: TestIngress;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
}, 60_000);
afterAll(async () => ingress?.close());

describe('contact events of an import', () => {
  it('are on mail.events when the import answers: none is left for the relay', async () => {
    const org = await organizationWithKey(ingress.url);
    const rows = Array.from({ length: 3_000 }, (_, i) => JSON.stringify({ email: `c${i}@example.net` })).join('\n');
    const res = await call(ingress.url, 'POST', '/api/v1/contacts/import', { key: org.key, raw: rows, headers: { 'content-type': 'application/x-ndjson' } });
    expect([res.status, res.body.created]).toEqual([200, 3_000]);
    const { rows: [counts] } = await ingress.platform.pg.query<{ events: number; waiting: number }>(
      `SELECT count(*)::int AS events, count(o.event_id)::int AS waiting
         FROM mail_events e LEFT JOIN mail_event_outbox o ON o.event_id = e.id
        WHERE e.organization_id = $1 AND e.type = 'contact.created'`,
      [org.organizationId],
    );
    expect(counts).toEqual({ events: 3_000, waiting: 0 });
  });
});
