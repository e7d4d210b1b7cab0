// Resend's own SDK (the `resend` npm package, pinned) as a client of the mail API,
// pointed at the test ingress with RESEND_BASE_URL, unmodified.
import { Resend } from 'resend';
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../support/ingress.ts';
import { useResendIngress } from '../../support/mail/resend-ingress.ts';
import { nextSecond, organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { storedCount } from '../../support/mail/messages.ts';

const root = useResendIngress();
let resend: Resend;
let org: { organizationId: string; key: string };
let from: string;

beforeAll(async () => {
  org = await organizationWithKey(root.url);
  from = `Acme <hello@${(await verifiedDomain(root.url, org.key)).name}>`;
  resend = new Resend(org.key);
});

describe('the resend SDK', () => {
  it('sends an email and reads its id; the message is stored as sent', async () => {
    const { data, error } = await resend.emails.send({ from, to: ['delivered@example.com'], subject: 'Hello from the SDK', html: '<strong>It works</strong>', replyTo: 'help@example.com', tags: [{ name: 'source', value: 'sdk' }] });
    expect(error).toBeNull();
    expect(data!.id).toMatch(/^[0-9a-f-]{36}$/);
    const got = await resend.emails.get(data!.id);
    expect(got.error).toBeNull();
    expect(got.data).toMatchObject({ object: 'email', id: data!.id, subject: 'Hello from the SDK', to: ['delivered@example.com'], reply_to: ['help@example.com'], last_event: 'queued' });
  });

  it('sends with an idempotency key: a repeat returns the original id', async () => {
    const first = await resend.emails.send({ from, to: 'a@example.com', subject: 'Receipt', text: 'Thanks' }, { idempotencyKey: 'sdk-order-42' });
    const again = await resend.emails.send({ from, to: 'a@example.com', subject: 'Receipt', text: 'Thanks' }, { idempotencyKey: 'sdk-order-42' });
    expect(again.data!.id).toBe(first.data!.id);
    expect(again.headers!['idempotent-replayed']).toBe('true');
  });

  it('sends a batch and reads the ids', async () => {
    await nextSecond();
    const { data, error } = await resend.batch.send([
      { from, to: 'one@example.com', subject: 'One', text: '1' },
      { from, to: 'two@example.com', subject: 'Two', html: '<p>2</p>' },
    ]);
    expect(error).toBeNull();
    expect(data!.data).toHaveLength(2);
    const subjects = await Promise.all(data!.data.map(async (d) => (await resend.emails.get(d.id)).data!.subject));
    expect(subjects).toEqual(['One', 'Two']);
  });

  it('sends attachments given as a Buffer', async () => {
    const { data } = await resend.emails.send({ from, to: 'a@example.com', subject: 'Invoice', text: 'Attached', attachments: [{ filename: 'invoice.txt', content: Buffer.from('total: 12 EUR') }] });
    expect((await call(root.ingress.url, 'GET', `/emails/${data!.id}`, { key: org.key })).body.attachments[0]).toMatchObject({ filename: 'invoice.txt', size: 13 });
  });

  it('reads our stable error code as error.name, and stores nothing on refusals', async () => {
    const fresh = await organizationWithKey(root.ingress.url);
    const client = new Resend(fresh.key);
    const unverified = await client.emails.send({ from: 'x@not-verified.example.com', to: 'a@example.com', subject: 'Hi', text: 'x' });
    expect(unverified.data).toBeNull();
    expect(unverified.error).toMatchObject({ name: 'from_domain_not_verified', statusCode: 422 });
    const bad = await client.emails.send({ from, to: 'not an address', subject: 'Hi', text: 'x' });
    expect(bad.error).toMatchObject({ name: 'invalid_recipient', statusCode: 400 });
    const revoked = await new Resend('mk_live_00000000000000000000000000000000').emails.send({ from, to: 'a@example.com', subject: 'Hi', text: 'x' });
    expect(revoked.error).toMatchObject({ name: 'invalid_api_key', statusCode: 401 });
    expect(await storedCount(root.ingress.platform.pg, fresh.organizationId)).toBe(0);
  });
});
