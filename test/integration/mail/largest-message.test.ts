// The spec's largest message (html and text of 2 MB each) goes all the way: stored, published to
// mail.messages (past Kafka's default 1 MB a message), and several at once too (a publication of
// many such messages is split so that no request to the broker exceeds what the topic takes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PART_BYTES } from '../../../src/mail/emails/email-schemas.ts';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { publishedRecords } from '../../support/mail/messages.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

let ingress: TestIngress;
let org: { organizationId: string; key: string };
let domain: string;

// Its own databases: publishing 4 MB messages may take past the outbox relay's 2 s, and another
// file's ingress would then relay them to its own topic.
useOwnDatabases();

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
  org = await organizationWithKey(ingress.url);
  domain = (await verifiedDomain(ingress.url, org.key)).name;
}, 60_000);
afterAll(async () => ingress?.close());

/** A part of exactly `bytes` UTF-8 bytes, of multi-byte characters (é is 2 bytes, € 3). */
const part = (bytes: number, prefix: string) => {
  const body = 'é€'.repeat(Math.floor((bytes - prefix.length) / 5));
  return prefix + body + 'x'.repeat(bytes - prefix.length - Buffer.byteLength(body));
};

describe('the largest message the spec allows', () => {
  it('is stored and published whole, alone and six at once', async () => {
    const message = (i: number) => ({
      from: `news@${domain}`, to: `reader${i}@example.com`, subject: `Largest ${i}`,
      html: part(MAX_PART_BYTES, `<p>${i}</p>`), text: part(MAX_PART_BYTES, `${i} `),
    });
    expect(Buffer.byteLength(message(0).html)).toBe(MAX_PART_BYTES);
    const alone = await call(ingress.url, 'POST', '/emails', { key: org.key, body: message(0) });
    expect(alone.status).toBe(200);
    const together = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => call(ingress.url, 'POST', '/emails', { key: org.key, body: message(i) })));
    expect(together.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const ids = [alone, ...together].map((r) => r.body.id as string);
    const records = await publishedRecords(ingress.platform.config, ids, 1000, 60_000);
    for (const [i, id] of ids.entries()) {
      const [record] = records.get(id)!;
      expect(record, `message ${i} on the topic`).toBeDefined();
      expect(record!.html).toBe(message(i).html);
      expect(record!.text).toBe(message(i).text);
    }
    // Nothing left waiting for the relay.
    const { rows } = await ingress.platform.pg.query('SELECT count(*)::int AS n FROM mail_message_outbox WHERE message_id = ANY($1::uuid[])', [ids]);
    expect(rows[0].n).toBe(0);
  }, 120_000);
});
