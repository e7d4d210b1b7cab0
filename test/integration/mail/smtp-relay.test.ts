// The SMTP relay of an ingress of this file, through two clients nobody here wrote:
// Debian's swaks and nodemailer. STARTTLS before AUTH, AUTH PLAIN and LOGIN with a
// mail API key, failures counted by the per-IP failed-authentication limit that the
// API shares, the per-key request limit, From on an unverified domain refused with
// 550, a bad message refused with 554, and a resubmission after a lost reply
// storing nothing new (key smtp:<key id>:<Message-ID>). Each client connects from an
// address of its own in 127/8, so its failures count for it alone.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { testConfig } from '../../support/env.ts';
import { adminOptions, mailKey, nextSecond, organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';

const run = promisify(execFile);
let ingress: TestIngress;
let db: pg.Pool;
let port: number;
const config = testConfig();

beforeAll(async () => {
  ingress = await startIngress({ MAIL_RELAY_SMTP_PORT: '0' });
  port = ingress.app.relaySmtpPort!;
  db = new pg.Pool({ connectionString: config.DATABASE_URL, max: 2 });
}, 120_000);

afterAll(async () => {
  await db?.end();
  await ingress?.close();
});

/** A loopback address no other client of the run uses. */
const freshLoopback = () => `127.${1 + (randomBytes(1)[0]! % 250)}.${randomBytes(1)[0]}.${1 + (randomBytes(1)[0]! % 250)}`;

async function organization(options: { rate_limit?: number } = {}) {
  const org = await organizationWithKey(ingress.url, { rate_limit: options.rate_limit ?? 100 });
  const domain = await verifiedDomain(ingress.url, org.key);
  return { ...org, from: `app@${domain.name}` };
}

/** swaks's whole conversation, and its exit code (0: the message was accepted). */
async function swaks(args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('swaks', ['--server', '127.0.0.1', '--port', String(port), '--local-interface', freshLoopback(), '--timeout', '20', ...args]);
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

const queuedId = (output: string) => /250 2\.0\.0 Queued as ([0-9a-f-]{36})/.exec(output)?.[1];

const relay = (auth: { user: string; pass: string } | undefined, options: Record<string, unknown> = {}) =>
  nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false }, localAddress: freshLoopback(), ...(auth ? { auth } : {}), ...options });

describe('the SMTP relay', () => {
  it('takes a message from swaks over STARTTLS with AUTH PLAIN, and a resubmission with the same Message-ID stores nothing new', async () => {
    const org = await organization();
    const messageId = `<${randomBytes(8).toString('hex')}@client.example>`;
    const args = [
      '--tls', '--auth', 'PLAIN', '--auth-user', 'resend', '--auth-password', org.key,
      '--from', org.from, '--to', 'reader@example.net', '--header', 'Subject: Relayed by swaks', '--header', `Message-Id: ${messageId}`,
      '--header', `From: App <${org.from}>`, '--body', 'Hello from swaks',
    ];
    const first = await swaks(args);
    expect(first.code, first.output).toBe(0);
    const id = queuedId(first.output);
    expect(id).toBeDefined();
    const again = await swaks(args);
    expect(again.code, again.output).toBe(0);
    expect(queuedId(again.output)).toBe(id);
    const { rows } = await db.query('SELECT id, idempotency_key, subject, to_addresses, text_body FROM mail_messages WHERE organization_id = $1', [org.organizationId]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, idempotency_key: `smtp:${org.keyId}:${messageId}`, subject: 'Relayed by swaks', to_addresses: ['reader@example.net'] });
    expect(rows[0].text_body).toContain('Hello from swaks');
    const email = await call(ingress.url, 'GET', `/emails/${id}`, { key: org.key });
    expect(email.body).toMatchObject({ from: `App <${org.from}>`, subject: 'Relayed by swaks' });
  });

  it('takes a message from nodemailer with AUTH LOGIN: html, text, an attachment, and the envelope\'s other recipients as Bcc', async () => {
    const org = await organization();
    const transport = relay({ user: 'resend', pass: org.key }, { authMethod: 'LOGIN' });
    const info = await transport.sendMail({
      from: `App <${org.from}>`, to: 'one@example.net', cc: 'two@example.net', bcc: 'hidden@example.net', subject: 'Relayed by nodemailer',
      html: '<p>Hi</p>', text: 'Hi', attachments: [{ filename: 'note.txt', content: 'a note' }],
    });
    const id = /Queued as ([0-9a-f-]{36})/.exec(info.response)![1];
    const { rows } = await db.query('SELECT to_addresses, cc_addresses, bcc_addresses, html, attachments, idempotency_key FROM mail_messages WHERE id = $1', [id]);
    expect(rows[0]).toMatchObject({ to_addresses: ['one@example.net'], cc_addresses: ['two@example.net'], bcc_addresses: ['hidden@example.net'], idempotency_key: `smtp:${org.keyId}:${info.messageId}` });
    expect(rows[0].html).toContain('<p>Hi</p>');
    expect(rows[0].attachments).toEqual([expect.objectContaining({ filename: 'note.txt', size: 6 })]);
    transport.close();
  });

  it('refuses AUTH before STARTTLS, a wrong password or user, a test key; failures count by the per-IP limit shared with the API', async () => {
    const org = await organization();
    const plain = relay({ user: 'resend', pass: org.key }, { ignoreTLS: true, requireTLS: false });
    await expect(plain.verify()).rejects.toMatchObject({ responseCode: 538 });
    const testKey = await mailKey(ingress.url, org.organizationId, { kind: 'test' });
    await expect(relay({ user: 'resend', pass: testKey.key }).verify()).rejects.toMatchObject({ responseCode: 535 });

    // One client address: its 10 failures a minute are spent, then even the right key is refused, and so is the API.
    const address = freshLoopback();
    const from = (pass: string, user = 'resend') => relay({ user, pass }, { localAddress: address });
    await expect(from(org.key, 'someone').verify()).rejects.toMatchObject({ responseCode: 535 });
    for (let i = 0; i < 9; i++) await expect(from(`mk_live_${'0'.repeat(32)}`).verify()).rejects.toMatchObject({ responseCode: 535 });
    await expect(from(org.key).verify()).rejects.toMatchObject({ responseCode: 454 });
    const api = await call(ingress.url, 'GET', '/api/v1/domains', { key: 'mk_live_wrong', ip: address });
    expect([api.status, api.body.error.code]).toEqual([429, 'auth_rate_limited']);
    expect(await relay({ user: 'resend', pass: org.key }).verify()).toBe(true);
  });

  it('sends to the envelope\'s recipients only, refuses a Bcc-only message and a 51st recipient, and a key revoked mid-session at its next message', async () => {
    const org = await organization();
    const transport = relay({ user: 'resend', pass: org.key }, { pool: true, maxConnections: 1 });
    // The header names shown@ and not-a-recipient@; the envelope names shown@ and quiet@.
    const info = await transport.sendMail({
      envelope: { from: org.from, to: ['shown@example.net', 'quiet@example.net'] },
      from: org.from, to: ['shown@example.net', 'not-a-recipient@example.net'], subject: 'Envelope', text: 'x',
    });
    const id = /Queued as ([0-9a-f-]{36})/.exec(info.response)![1];
    const { rows } = await db.query('SELECT to_addresses, bcc_addresses FROM mail_messages WHERE id = $1', [id]);
    expect(rows[0]).toEqual({ to_addresses: ['shown@example.net'], bcc_addresses: ['quiet@example.net'] });
    await expect(transport.sendMail({ envelope: { from: org.from, to: ['quiet@example.net'] }, from: org.from, to: 'shown@example.net', subject: 'Bcc only', text: 'x' }))
      .rejects.toMatchObject({ responseCode: 554 });
    // The 51st recipient is refused for good; the message goes to the first 50.
    const many = Array.from({ length: 51 }, (_, i) => `r${i}@example.net`);
    const partial = await transport.sendMail({ from: org.from, to: many, subject: 'Many', text: 'x' });
    expect([partial.accepted.length, partial.rejected]).toEqual([50, ['r50@example.net']]);
    expect(partial.rejectedErrors?.[0]).toMatchObject({ responseCode: 552 });

    const revoked = await call(ingress.url, 'DELETE', `/admin/v1/organizations/${org.organizationId}/keys/${org.keyId}`, adminOptions);
    expect(revoked.status).toBe(200);
    await new Promise((r) => setTimeout(r, Number(config.MAIL_LOOKUP_CACHE_MS) + 100));
    await expect(transport.sendMail({ from: org.from, to: 'shown@example.net', subject: 'After revoking', text: 'x' })).rejects.toMatchObject({ responseCode: 535 });
    transport.close();
  });

  it('refuses From on an unverified domain with 550, a message without a Subject with 554, and a key over its per-second limit with 451', async () => {
    const org = await organization({ rate_limit: 1 });
    const auth = ['--tls', '--auth', 'LOGIN', '--auth-user', 'resend', '--auth-password', org.key, '--to', 'reader@example.net'];
    await nextSecond(); // the key's one request of this second went to making its domain
    const unverified = await swaks([...auth, '--from', 'app@unverified.example.org', '--header', 'From: app@unverified.example.org', '--header', 'Subject: Hi']);
    expect(unverified.code).not.toBe(0);
    expect(unverified.output).toMatch(/<~?\*+ +550 5\.7\.1 unverified\.example\.org is not a verified domain/);
    const { rows } = await db.query('SELECT count(*)::int AS n FROM mail_messages WHERE organization_id = $1', [org.organizationId]);
    expect(rows[0].n).toBe(0);

    const transport = relay({ user: 'resend', pass: org.key }, { pool: true, maxConnections: 1 });
    await nextSecond();
    await expect(transport.sendMail({ from: org.from, to: 'reader@example.net', text: 'no subject' })).rejects.toMatchObject({ responseCode: 554 });
    // One request a second: of four messages sent one after another, some are refused until the second turns.
    await nextSecond();
    const results = await Promise.allSettled([0, 1, 2, 3].map((i) => transport.sendMail({ from: org.from, to: 'reader@example.net', subject: `Burst ${i}`, text: 'x' })));
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.responseCode);
    expect(refused).toContain(451);
    transport.close();
  });
});
