// A message with more recipients than a daily allowance it is counted against could
// never be sent (each recipient is one email of the day): POST /emails, each item of
// /emails/batch and the SMTP relay refuse it at once, naming the limit, and store nothing.
import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { nextSecond, organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { storedCount } from '../../support/mail/messages.ts';

let ingress: TestIngress;

beforeAll(async () => {
  // A fresh domain's first day allows 4.
  ingress = await startIngress({ MAIL_WARMUP_STAGES: '4,1000', MAIL_RELAY_SMTP_PORT: '0' });
}, 120_000);

afterAll(async () => {
  await ingress?.close();
});

async function organization(options: { daily_send_cap?: number; plan?: 'free' | 'pro' } = {}) {
  const org = await organizationWithKey(ingress.url, { ...options, rate_limit: 1000 });
  const domain = await verifiedDomain(ingress.url, org.key);
  return { ...org, from: `News <news@${domain.name}>` };
}

const addresses = (n: number, prefix = 'r') => Array.from({ length: n }, (_, i) => `${prefix}${i}@example.net`);

describe('a message larger than a daily allowance', () => {
  it('is refused by POST /emails with 422 exceeds_daily_cap naming the organization\'s cap or the first warm-up stage, and nothing is stored', async () => {
    const capped = await organization({ daily_send_cap: 2 });
    const res = await call(ingress.url, 'POST', '/emails', { key: capped.key, body: { from: capped.from, to: addresses(2), cc: ['c@example.net'], subject: 'Hi', text: 'Hi' } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ name: 'validation_error', error: { code: 'exceeds_daily_cap', details: [{ path: '/to' }] } });
    expect(res.body.message).toMatch(/3 recipients.*organization's daily send cap of 2/);
    // At the cap it is accepted.
    expect((await call(ingress.url, 'POST', '/emails', { key: capped.key, body: { from: capped.from, to: addresses(2), subject: 'Hi', text: 'Hi' } })).status).toBe(200);
    expect(await storedCount(ingress.platform.pg, capped.organizationId)).toBe(1);

    const fresh = await organization();
    const big = await call(ingress.url, 'POST', '/emails', { key: fresh.key, body: { from: fresh.from, to: addresses(5), subject: 'Hi', text: 'Hi' } });
    expect(big.status).toBe(422);
    expect(big.body.error.code).toBe('exceeds_daily_cap');
    expect(big.body.message).toMatch(/5 recipients.*warm-up stage of 4/);
    expect(await storedCount(ingress.platform.pg, fresh.organizationId)).toBe(0);
  });

  it('refuses that item of a batch: the whole batch when strict, only the item when permissive', async () => {
    const org = await organization({ daily_send_cap: 3 });
    const items = [
      { from: org.from, to: addresses(1, 'a'), subject: 'One', text: 'Hi' },
      { from: org.from, to: addresses(4, 'b'), subject: 'Four', text: 'Hi' },
    ];
    const strict = await call(ingress.url, 'POST', '/emails/batch', { key: org.key, body: items });
    expect(strict.status).toBe(422);
    expect(strict.body.error).toMatchObject({ code: 'exceeds_daily_cap', details: [{ path: '/1/to' }] });
    expect(await storedCount(ingress.platform.pg, org.organizationId)).toBe(0);
    await nextSecond(); // one batch per second per key
    const permissive = await call(ingress.url, 'POST', '/emails/batch', { key: org.key, body: items, headers: { 'x-batch-validation': 'permissive' } });
    expect(permissive.status).toBe(200);
    expect(permissive.body.data).toHaveLength(1);
    expect(permissive.body.errors).toEqual([expect.objectContaining({ index: 1, code: 'exceeds_daily_cap' })]);
    expect(await storedCount(ingress.platform.pg, org.organizationId)).toBe(1);
  });

  it('is refused by the SMTP relay for good (552 5.5.3), and nothing is stored', async () => {
    const org = await organization({ daily_send_cap: 2 });
    const transport = nodemailer.createTransport({
      host: '127.0.0.1', port: ingress.app.relaySmtpPort!, secure: false, requireTLS: true, tls: { rejectUnauthorized: false },
      auth: { user: 'resend', pass: org.key },
    });
    try {
      await expect(transport.sendMail({ from: org.from, to: addresses(3), subject: 'Hi', text: 'Hi', messageId: `<${randomBytes(6).toString('hex')}@client.example>` }))
        .rejects.toMatchObject({ responseCode: 552, response: expect.stringMatching(/5\.5\.3 .*daily send cap of 2/) });
    } finally {
      transport.close();
    }
    expect(await storedCount(ingress.platform.pg, org.organizationId)).toBe(0);
  });
});
