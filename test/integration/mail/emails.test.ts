// POST /emails, POST /emails/batch and GET /emails/:id through the real ingress:
// what is accepted, stored and published to mail.messages, and every refusal
// (a 4xx with a stable code, nothing stored).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { mailKey, nextSecond, organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { publishedRecords, storedCount } from '../../support/mail/messages.ts';

let ingress: TestIngress;
let url: string;
let org: { organizationId: string; key: string };
let domain: string;
const published: string[] = [];

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
  url = ingress.url;
  org = await organizationWithKey(url);
  domain = (await verifiedDomain(url, org.key)).name;
});
afterAll(async () => ingress?.close());

const send = (body: unknown, key = org.key, headers: Record<string, string> = {}) => call(url, 'POST', '/emails', { key, body, headers });
const minimal = () => ({ from: `Acme <news@${domain}>`, to: 'reader@example.com', subject: 'Hello', html: '<p>Hi</p>' });

describe('POST /emails', () => {
  it('stores the message, answers its id, and shows it on GET /emails/:id', async () => {
    const res = await send({ ...minimal(), to: ['Reader <Reader@Example.COM>', 'two@example.com'], cc: 'cc@example.com', bcc: ['bcc@example.com'], reply_to: 'help@example.com', text: 'Hi', headers: { 'X-Campaign': 'spring' }, tags: [{ name: 'category', value: 'welcome' }] });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    published.push(res.body.id);
    const got = await call(url, 'GET', `/emails/${res.body.id}`, { key: org.key });
    expect(got.body).toMatchObject({
      object: 'email', id: res.body.id, from: `Acme <news@${domain}>`, to: ['Reader <Reader@example.com>', 'two@example.com'], cc: ['cc@example.com'], bcc: ['bcc@example.com'],
      reply_to: ['help@example.com'], subject: 'Hello', html: '<p>Hi</p>', text: 'Hi', headers: { 'X-Campaign': 'spring' }, tags: [{ name: 'category', value: 'welcome' }],
      last_event: 'queued', suppressed: [], recipient_count: 4, scheduled_at: null,
    });
  });

  it('drops suppressed recipients, counts the others, and does not queue a message left with none', async () => {
    await call(url, 'POST', '/api/v1/suppressions', { key: org.key, body: { email: 'Gone@Example.com', reason: 'bounce' } });
    const partly = await send({ ...minimal(), to: ['gone@example.com', 'kept@example.com'] });
    const got = await call(url, 'GET', `/emails/${partly.body.id}`, { key: org.key });
    expect(got.body).toMatchObject({ last_event: 'queued', suppressed: ['gone@example.com'], recipient_count: 1 });
    published.push(partly.body.id);
    const all = await send({ ...minimal(), to: 'GONE@example.com' });
    expect(all.status).toBe(200);
    expect((await call(url, 'GET', `/emails/${all.body.id}`, { key: org.key })).body).toMatchObject({ last_event: 'suppressed', recipient_count: 0 });
    // Nothing to send: never in the outbox, never published.
    const { rows } = await ingress.platform.pg.query('SELECT count(*)::int AS n FROM mail_message_outbox WHERE message_id = $1', [all.body.id]);
    expect(rows[0].n).toBe(0);
  });

  it('holds a message with scheduled_at in the future as scheduled', async () => {
    const at = new Date(Date.now() + 3600_000).toISOString().replace('Z', '+00:00');
    const res = await send({ ...minimal(), scheduled_at: at });
    expect((await call(url, 'GET', `/emails/${res.body.id}`, { key: org.key })).body).toMatchObject({ last_event: 'scheduled', scheduled_at: new Date(at).toISOString() });
    published.push(res.body.id);
  });

  it('stores attachments (base64) and publishes only their names and sizes', async () => {
    const content = Buffer.from('%PDF-1.4 hello').toString('base64');
    const res = await send({ ...minimal(), attachments: [{ filename: 'invoice.pdf', content, content_type: 'application/pdf' }] });
    expect(res.status).toBe(200);
    expect((await call(url, 'GET', `/emails/${res.body.id}`, { key: org.key })).body.attachments).toEqual([{ filename: 'invoice.pdf', content_type: 'application/pdf', content_id: null, size: 14 }]);
    const { rows } = await ingress.platform.pg.query('SELECT content FROM mail_message_attachments WHERE message_id = $1', [res.body.id]);
    expect(rows[0].content.toString()).toBe('%PDF-1.4 hello');
    published.push(res.body.id);
  });

  it('publishes each accepted message once to mail.messages, keyed by organization', async () => {
    const records = await publishedRecords(ingress.platform.config, published);
    for (const id of published) expect(records.get(id), id).toHaveLength(1);
    const first = records.get(published[0]!)![0]!;
    expect(first).toMatchObject({ organization_id: org.organizationId, kind: 'transactional', subject: 'Hello', recipient_count: 4, tags: { category: 'welcome' } });
    expect(first.html).toBe('<p>Hi</p>');
  });

  it('refuses bad requests with a stable code and stores nothing', async () => {
    const fresh = await organizationWithKey(url);
    const name = (await verifiedDomain(url, fresh.key)).name;
    const ok = { from: `news@${name}`, to: 'a@example.com', subject: 'Hi', text: 'x' };
    const cases: [unknown, number, string][] = [
      [{ ...ok, to: 'not an address' }, 400, 'invalid_recipient'],
      [{ ...ok, to: [] }, 400, 'missing_recipient'],
      [{ ...ok, cc: ['x@example.com', 'bad@'] }, 400, 'invalid_recipient'],
      // More than 50 is too_many_recipients (docs/mail-api.md), counted before any address is read.
      [{ ...ok, to: Array.from({ length: 51 }, (_, i) => `r${i}@example.com`) }, 400, 'too_many_recipients'],
      [{ ...ok, cc: Array.from({ length: 50 }, (_, i) => `c${i}@example.com`) }, 400, 'too_many_recipients'],
      [{ ...ok, to: [...Array.from({ length: 50 }, (_, i) => `r${i}@example.com`), 'not an address'] }, 400, 'too_many_recipients'],
      [{ ...ok, reply_to: Array.from({ length: 51 }, (_, i) => `r${i}@example.com`) }, 400, 'validation_failed'],
      [{ ...ok, to: Array.from({ length: 30 }, (_, i) => `r${i}@example.com`), bcc: Array.from({ length: 21 }, (_, i) => `b${i}@example.com`) }, 400, 'too_many_recipients'],
      [{ ...ok, from: 'nobody' }, 400, 'invalid_from'],
      [{ ...ok, subject: 'two\nlines' }, 400, 'validation_failed'],
      [{ ...ok, subject: '' }, 400, 'validation_failed'],
      [{ ...ok, text: undefined }, 400, 'missing_content'],
      [{ ...ok, html: 'x'.repeat(2 * 1024 * 1024 + 1) }, 400, 'content_too_large'],
      [{ ...ok, headers: { 'Message-ID': '<x@y>' } }, 400, 'reserved_header'],
      [{ ...ok, headers: { 'X-Ok': 'a\r\nBcc: evil@example.com' } }, 400, 'validation_failed'],
      [{ ...ok, tags: [{ name: 'bad tag', value: 'x' }] }, 400, 'validation_failed'],
      // Resend's English times are taken ("tomorrow at 9am"); anything else is refused.
      [{ ...ok, scheduled_at: 'someday' }, 400, 'invalid_scheduled_at'],
      [{ ...ok, attachments: [{ filename: 'a.txt', path: 'https://example.com/a.txt' }] }, 422, 'attachment_path_not_supported'],
      [{ ...ok, attachments: [{ filename: 'a.txt', content: 'not base64!' }] }, 400, 'invalid_attachment'],
      [{ ...ok, template: { id: 'welcome' } }, 422, 'template_with_content'],
      [{ ...ok, text: undefined, template: { id: 'welcome' } }, 404, 'template_not_found'],
      [{ ...ok, topic_id: 'no-such-topic' }, 422, 'topic_not_found'],
      [{ ...ok, unknown_field: 1 }, 400, 'unknown_field'],
      [{ ...ok, from: 'news@unverified.example.com' }, 422, 'from_domain_not_verified'],
      [{ ...ok, from: `news@${domain}` }, 422, 'from_domain_not_verified'],
    ];
    for (const [body, status, code] of cases) {
      const res = await send(body, fresh.key);
      expect([res.status, res.body.error.code], JSON.stringify(body).slice(0, 200)).toEqual([status, code]);
      expect(res.body.statusCode).toBe(status);
    }
    const huge = await send({ ...ok, attachments: [{ filename: 'big.bin', content: Buffer.alloc(40 * 1024 * 1024 + 1).toString('base64') }] }, fresh.key);
    expect([huge.status, huge.body.error.code]).toEqual([400, 'attachments_too_large']);
    expect((await call(url, 'POST', '/emails', { key: fresh.key, raw: '{"from":' })).body.error.code).toBe('invalid_json');
    // An empty body under Content-Type: application/json is invalid_json too (docs/links-api.md, Errors).
    const empty = await call(url, 'POST', '/emails', { key: fresh.key, raw: '' });
    expect([empty.status, empty.body.name, empty.body.error.code]).toEqual([400, 'validation_error', 'invalid_json']);
    const batch = await call(url, 'POST', '/emails/batch', { key: fresh.key, body: [ok, { ...ok, to: Array.from({ length: 51 }, (_, i) => `r${i}@example.com`) }] });
    expect([batch.status, batch.body.error.code, batch.body.error.details]).toEqual([400, 'too_many_recipients', [{ path: '/1/to', message: expect.any(String) }]]);
    expect(await storedCount(ingress.platform.pg, fresh.organizationId)).toBe(0);
  });

  it('sends with full and send keys, only from the domains a key may use; test keys cannot send', async () => {
    const other = (await verifiedDomain(url, org.key)).name;
    const sendKey = await mailKey(url, org.organizationId, { kind: 'send' });
    expect((await send(minimal(), sendKey.key)).status).toBe(200);
    const testKey = await mailKey(url, org.organizationId, { kind: 'test' });
    expect((await send(minimal(), testKey.key)).body.error.code).toBe('insufficient_permissions');
    const restricted = await mailKey(url, org.organizationId, { kind: 'send', domains: [other] });
    const refused = await send(minimal(), restricted.key);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'domain_not_allowed']);
    const allowed = await send({ ...minimal(), from: `x@${other}` }, restricted.key);
    expect(allowed.status).toBe(200);
    // Another domain's messages are 404 to the restricted key, as another organization's are to everyone.
    const mine = await send(minimal());
    expect((await call(url, 'GET', `/emails/${mine.body.id}`, { key: restricted.key })).status).toBe(404);
    expect((await call(url, 'GET', `/emails/${allowed.body.id}`, { key: restricted.key })).status).toBe(200);
    expect((await call(url, 'GET', `/emails/${allowed.body.id}`, { key: testKey.key })).status).toBe(200);
    const stranger = await organizationWithKey(url);
    expect((await call(url, 'GET', `/emails/${mine.body.id}`, { key: stranger.key })).status).toBe(404);
    expect((await call(url, 'GET', '/emails/not-a-uuid', { key: org.key })).status).toBe(404);
  });
});

describe('POST /emails/batch', () => {
  // One batch per key and second is admitted (the per-key limit); each call waits for a fresh second.
  const batch = async (key: string, body: unknown, headers: Record<string, string> = {}) => {
    await nextSecond();
    return call(url, 'POST', '/emails/batch', { key, body, headers });
  };
  const item = (i: number) => ({ from: `news@${domain}`, to: `r${i}@example.com`, subject: `Hello ${i}`, text: 'x' });

  it('stores every item and answers their ids in order', async () => {
    const res = await batch(org.key, [item(1), item(2), item(3)]);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(3);
    const subjects = await Promise.all(res.body.data.map(async ({ id }: { id: string }) => (await call(url, 'GET', `/emails/${id}`, { key: org.key })).body.subject));
    expect(subjects).toEqual(['Hello 1', 'Hello 2', 'Hello 3']);
  });

  it('strict (default): one invalid item refuses the batch, naming it, and stores nothing', async () => {
    const fresh = await organizationWithKey(url);
    const name = (await verifiedDomain(url, fresh.key)).name;
    const good = { from: `n@${name}`, to: 'a@example.com', subject: 's', text: 't' };
    for (const [body, code, path] of [
      [[good, { ...good, to: 'nope' }], 'invalid_recipient', '/1/to'],
      [[good, { ...good, from: `n@${domain}` }], 'from_domain_not_verified', '/1/from'],
      [[good, { ...good, attachments: [] }], 'unknown_field', '/1/attachments'],
    ] as const) {
      const res = await batch(fresh.key, body);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.details[0].path).toBe(path);
    }
    expect((await batch(fresh.key, Array.from({ length: 101 }, () => good))).status).toBe(400);
    expect((await batch(fresh.key, [])).status).toBe(400);
    expect((await batch(fresh.key, good)).status).toBe(400);
    expect(await storedCount(ingress.platform.pg, fresh.organizationId)).toBe(0);
  });

  it('permissive: accepts the valid items and lists the others', async () => {
    const res = await batch(org.key, [item(1), { ...item(2), to: 'nope' }, item(3)], { 'x-batch-validation': 'permissive' });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    expect(res.body.errors).toEqual([{ index: 1, code: 'invalid_recipient', message: expect.any(String) }]);
  });
});

describe('suppressions', () => {
  it('add (idempotent), get by id or address, list, remove', async () => {
    const { key } = await organizationWithKey(url);
    const added = await call(url, 'POST', '/api/v1/suppressions', { key, body: { email: 'Someone@Example.com' } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ object: 'suppression', email: 'someone@example.com', reason: 'manual' });
    const again = await call(url, 'POST', '/api/v1/suppressions', { key, body: { email: 'someone@example.com', reason: 'complaint' } });
    expect([again.status, again.body.id, again.body.reason]).toEqual([200, added.body.id, 'manual']);
    expect((await call(url, 'GET', '/api/v1/suppressions/SOMEONE@example.com', { key })).body.id).toBe(added.body.id);
    expect((await call(url, 'GET', `/api/v1/suppressions/${added.body.id}`, { key })).body.email).toBe('someone@example.com');
    expect((await call(url, 'GET', '/api/v1/suppressions', { key })).body.data).toHaveLength(1);
    expect((await call(url, 'POST', '/api/v1/suppressions', { key, body: { email: 'nope' } })).body.name).toBe('invalid_email');
    expect((await call(url, 'POST', '/api/v1/suppressions', { key, body: { email: 'a@example.com', reason: 'other' } })).status).toBe(400);
    expect((await call(url, 'DELETE', `/api/v1/suppressions/${added.body.id}`, { key })).status).toBe(200);
    expect((await call(url, 'GET', `/api/v1/suppressions/${added.body.id}`, { key })).status).toBe(404);
    const stranger = await organizationWithKey(url);
    const theirs = await call(url, 'POST', '/api/v1/suppressions', { key: stranger.key, body: { email: 'x@example.com' } });
    expect((await call(url, 'GET', `/api/v1/suppressions/${theirs.body.id}`, { key })).status).toBe(404);
    expect((await call(url, 'GET', '/api/v1/suppressions', { key: (await mailKey(url, stranger.organizationId, { kind: 'send' })).key })).status).toBe(403);
  });
});

