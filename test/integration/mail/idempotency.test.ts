// The spec's idempotency rules for POST /emails and /emails/batch, through the real
// ingress: what a repeat answers, what it stores and what it publishes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { nextSecond, organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { publishedRecords, storedCount } from '../../support/mail/messages.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

let ingress: TestIngress;
let url: string;

// Its own databases: see vitest.config.ts (why this file may run side by side).
useOwnDatabases();

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
  url = ingress.url;
});
afterAll(async () => ingress?.close());

async function sender() {
  const org = await organizationWithKey(url);
  const { name } = await verifiedDomain(url, org.key);
  const message = (subject = 'Receipt') => ({ from: `shop@${name}`, to: 'buyer@example.com', subject, text: 'Thanks' });
  return { ...org, message };
}

const send = (key: string, body: unknown, headers: Record<string, string> = {}) => call(url, 'POST', '/emails', { key, body, headers });

describe('POST /emails', () => {
  it('a repeat of the Idempotency-Key header returns the original id, marked replayed, and stores nothing', async () => {
    const s = await sender();
    const first = await send(s.key, s.message(), { 'idempotency-key': 'order-1' });
    const again = await send(s.key, s.message(), { 'idempotency-key': 'order-1' });
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await storedCount(ingress.platform.pg, s.organizationId)).toBe(1);
    expect((await call(url, 'GET', `/emails/${first.body.id}`, { key: s.key })).body.idempotency_key).toBe('order-1');
  });

  it('accepts the key in the body; the header wins when both are sent', async () => {
    const s = await sender();
    const body = await send(s.key, { ...s.message(), idempotency_key: 'k-body' });
    expect((await send(s.key, { ...s.message(), idempotency_key: 'k-body' })).body.id).toBe(body.body.id);
    const both = await send(s.key, { ...s.message(), idempotency_key: 'k-ignored' }, { 'idempotency-key': 'k-header' });
    expect((await call(url, 'GET', `/emails/${both.body.id}`, { key: s.key })).body.idempotency_key).toBe('k-header');
    // The same request under the header's key alone is a repeat of it.
    const repeat = await send(s.key, { ...s.message(), idempotency_key: 'k-other' }, { 'idempotency-key': 'k-header' });
    expect([repeat.body.id, repeat.headers.get('idempotent-replayed')]).toEqual([both.body.id, 'true']);
    expect(await storedCount(ingress.platform.pg, s.organizationId)).toBe(2);
  });

  it('keys are unique per organization', async () => {
    const a = await sender();
    const b = await sender();
    const one = await send(a.key, a.message(), { 'idempotency-key': 'shared' });
    const two = await send(b.key, b.message(), { 'idempotency-key': 'shared' });
    expect(two.body.id).not.toBe(one.body.id);
    expect(two.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a key used with another request is 409 invalid_idempotent_request; a malformed key is 400', async () => {
    const s = await sender();
    await send(s.key, s.message('A'), { 'idempotency-key': 'k1' });
    const other = await send(s.key, s.message('B'), { 'idempotency-key': 'k1' });
    expect([other.status, other.body.error.code]).toEqual([409, 'invalid_idempotent_request']);
    expect((await send(s.key, s.message(), { 'idempotency-key': 'x'.repeat(257) })).body.error.code).toBe('invalid_idempotency_key');
    expect((await send(s.key, { ...s.message(), idempotency_key: '' })).status).toBe(400);
    expect(await storedCount(ingress.platform.pg, s.organizationId)).toBe(1);
  });

  it('a repeat answers the original id whatever its status (here suppressed: nothing is sent)', async () => {
    const s = await sender();
    await call(url, 'POST', '/api/v1/suppressions', { key: s.key, body: { email: 'buyer@example.com' } });
    const first = await send(s.key, s.message(), { 'idempotency-key': 'sup' });
    await call(url, 'DELETE', '/api/v1/suppressions/buyer@example.com', { key: s.key });
    const again = await send(s.key, s.message(), { 'idempotency-key': 'sup' });
    expect([again.body.id, again.headers.get('idempotent-replayed')]).toEqual([first.body.id, 'true']);
    expect((await call(url, 'GET', `/emails/${first.body.id}`, { key: s.key })).body.last_event).toBe('suppressed');
  });

  it('50 simultaneous requests with one key: one message, 50 answers with its id, one record on the topic', async () => {
    const s = await sender();
    const answers = await Promise.all(Array.from({ length: 50 }, () => send(s.key, s.message(), { 'idempotency-key': 'burst' })));
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
    const ids = new Set(answers.map((a) => a.body.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect(await storedCount(ingress.platform.pg, s.organizationId)).toBe(1);
    const records = await publishedRecords(ingress.platform.config, [...ids]);
    expect(records.get([...ids][0]!)).toHaveLength(1);
  });

  it('a message stored but not queued is queued by a replay', async () => {
    const s = await sender();
    const first = await send(s.key, s.message(), { 'idempotency-key': 'lost' });
    // As if the first attempt died after storing and before publishing (the real crash is in emails-crash.test.ts):
    // a fresh id, never published, then the replay.
    const { rows } = await ingress.platform.pg.query(
      `WITH m AS (INSERT INTO mail_messages (organization_id, idempotency_key, request_hash, from_address, from_domain, to_addresses, subject, text_body, recipient_count, status)
         SELECT organization_id, 'lost-2', request_hash, from_address, from_domain, to_addresses, subject, text_body, recipient_count, status FROM mail_messages WHERE id = $1 RETURNING id, created_at),
       o AS (INSERT INTO mail_message_outbox (message_id, created_at) SELECT id, created_at FROM m)
       SELECT id FROM m`,
      [first.body.id],
    );
    const unpublished = rows[0].id;
    const replay = await send(s.key, s.message(), { 'idempotency-key': 'lost-2' });
    expect([replay.body.id, replay.headers.get('idempotent-replayed')]).toEqual([unpublished, 'true']);
    // Published before the replay answered: no longer in the outbox.
    const { rows: after } = await ingress.platform.pg.query('SELECT count(*)::int AS n FROM mail_message_outbox WHERE message_id = $1', [unpublished]);
    expect(after[0].n).toBe(0);
    const records = await publishedRecords(ingress.platform.config, [first.body.id, unpublished]);
    expect(records.get(unpublished)).toHaveLength(1);
    expect(records.get(first.body.id)).toHaveLength(1);
  });
});

describe('POST /emails/batch', () => {
  const batch = async (key: string, body: unknown, headers: Record<string, string> = {}) => {
    await nextSecond();
    return call(url, 'POST', '/emails/batch', { key, body, headers });
  };

  it('items use their own idempotency_key; the request header is ignored', async () => {
    const s = await sender();
    const items = [{ ...s.message('1'), idempotency_key: 'item-1' }, { ...s.message('2'), idempotency_key: 'item-2' }, s.message('3')];
    const first = await batch(s.key, items, { 'idempotency-key': 'whole-batch' });
    expect(first.body.data).toHaveLength(3);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await batch(s.key, items, { 'idempotency-key': 'whole-batch' });
    expect(second.body.data[0].id).toBe(first.body.data[0].id);
    expect(second.body.data[1].id).toBe(first.body.data[1].id);
    // The keyless item is a new message each time; the header did not make the batch a repeat.
    expect(second.body.data[2].id).not.toBe(first.body.data[2].id);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(await storedCount(ingress.platform.pg, s.organizationId)).toBe(4);

    const replayed = await batch(s.key, items.slice(0, 2));
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.data.map((d: { id: string }) => d.id)).toEqual(first.body.data.slice(0, 2).map((d: { id: string }) => d.id));
    // A key of /emails is the same key in a batch item.
    const single = await send(s.key, s.message('4'), { 'idempotency-key': 'from-single' });
    expect((await batch(s.key, [{ ...s.message('4'), idempotency_key: 'from-single' }])).body.data[0].id).toBe(single.body.id);
  });

  it('an item key used with another request refuses a strict batch (nothing stored) and only that item when permissive', async () => {
    const s = await sender();
    await send(s.key, s.message('A'), { 'idempotency-key': 'taken' });
    const strict = await batch(s.key, [s.message('new'), { ...s.message('B'), idempotency_key: 'taken' }]);
    expect([strict.status, strict.body.error.code, strict.body.error.details[0].path]).toEqual([409, 'invalid_idempotent_request', '/1/idempotency_key']);
    expect(await storedCount(ingress.platform.pg, s.organizationId)).toBe(1);
    const permissive = await batch(s.key, [s.message('new'), { ...s.message('B'), idempotency_key: 'taken' }], { 'x-batch-validation': 'permissive' });
    expect(permissive.body.data).toHaveLength(1);
    expect(permissive.body.errors).toEqual([{ index: 1, code: 'invalid_idempotent_request', message: expect.any(String) }]);
    expect(await storedCount(ingress.platform.pg, s.organizationId)).toBe(2);
  });
});
