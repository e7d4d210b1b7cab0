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

  it('reads Resend\'s error names and statuses, our stable code in error.code, and stores nothing on refusals', async () => {
    const fresh = await organizationWithKey(root.ingress.url, { rate_limit: 1000 });
    const client = new Resend(fresh.key);
    const named = (answer: { error: unknown }, name: string, statusCode: number, code: string) => {
      expect(answer.error, code).toMatchObject({ name, statusCode });
      expect((answer.error as any).error.code, name).toBe(code);
    };
    named(await client.emails.send({ from: 'x@not-verified.example.com', to: 'a@example.com', subject: 'Hi', text: 'x' }), 'validation_error', 422, 'from_domain_not_verified');
    named(await client.emails.send({ from, to: 'not an address', subject: 'Hi', text: 'x' }), 'validation_error', 400, 'invalid_recipient');
    named(await client.emails.send({ from, subject: 'Hi', text: 'x' } as any), 'missing_required_field', 422, 'missing_required_field');
    named(await client.batch.send([{ from, to: 'a@example.com', subject: 'Hi', text: 'x' }, { from, to: 'not an address', subject: 'Hi', text: 'x' }]), 'validation_error', 400, 'invalid_recipient');
    // One batch per second is admitted (the spec's reservation).
    await nextSecond();
    named(await client.batch.send([{ from, subject: 'Hi', text: 'x' } as any]), 'missing_required_field', 422, 'missing_required_field');
    named(await client.events.send({ event: 'signed_up' } as any), 'validation_error', 400, 'invalid_contact');
    named(await client.events.send({ email: 'a@example.com' } as any), 'missing_required_field', 422, 'missing_required_field');
    named(await client.webhooks.create({ endpoint: 'not a url', events: ['email.sent'] }), 'validation_error', 400, 'validation_failed');
    named(await client.webhooks.create({ events: ['email.sent'] } as any), 'missing_required_field', 422, 'missing_required_field');
    named(await client.emails.get('00000000-0000-4000-8000-000000000000'), 'not_found', 404, 'not_found');
    named(await new Resend('mk_live_00000000000000000000000000000000').emails.send({ from, to: 'a@example.com', subject: 'Hi', text: 'x' }), 'invalid_api_key', 403, 'invalid_api_key');
    expect(await storedCount(root.ingress.platform.pg, fresh.organizationId)).toBe(0);
  });
});
