// The sender under careless and hostile clients, on the real stack: messages accepted by
// the ingress go through mail.messages to a sender process and over SMTP to a relay of this
// file's (smtp-capture.ts); bounces come back over SMTP to the ingress's inbound address.
// A recipient the relay refuses for good is suppressed; a contact's choice made while its
// message waited is honoured; each recipient of a message about a topic gets a copy whose
// unsubscribe link names it; a message that can no longer fit a daily cap fails.
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
import { startWorkerKinds, stopChild, type Child } from '../../support/processes.ts';
import { adminOptions, organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { startSmtpCapture, type SmtpCapture } from '../../support/mail/smtp-capture.ts';
import { startMailSender, stopMailSender } from '../../support/mail/sender.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

let ingress: TestIngress;
let relay: SmtpCapture;
const children: Child[] = [];

// Its own databases: see vitest.config.ts (why this file may run side by side).
useOwnDatabases();

beforeAll(async () => {
  ingress = await startIngress({ MAIL_INBOUND_SMTP_PORT: '0' });
  relay = await startSmtpCapture();
}, 120_000);

afterAll(async () => {
  await Promise.all(children.map((c) => stopChild(c)));
  await relay?.close();
  await ingress?.close();
});

async function startSender(): Promise<Child> {
  const child = await startMailSender({ SMTP_URL: relay.url, MAIL_RETRY_BASE_MS: '300' });
  children.push(child);
  return child;
}

async function stopSender(child: Child): Promise<void> {
  children.splice(children.indexOf(child), 1);
  await stopMailSender(child);
}

/** An organization with a full key, a verified domain and an opt-in topic `news`. */
async function organization(options: { daily_send_cap?: number } = {}) {
  const org = await organizationWithKey(ingress.url, { ...options, rate_limit: 1000 });
  const domain = await verifiedDomain(ingress.url, org.key);
  const topic = (await call(ingress.url, 'POST', '/api/v1/topics', { key: org.key, body: { slug: 'news', name: 'News', default_subscription: 'opt_in' } })).body;
  return { ...org, domain: domain.name, from: `News <news@${domain.name}>`, topicId: topic.id as string };
}
type Org = Awaited<ReturnType<typeof organization>>;

const api = (org: Org, method: string, path: string, body?: unknown) => call(ingress.url, method, path, { key: org.key, ...(body === undefined ? {} : { body }) });

async function send(org: Org, body: Record<string, unknown>): Promise<string> {
  const res = await api(org, 'POST', '/emails', { from: org.from, subject: 'Hello', text: 'Hi there', html: '<p>Hi there</p>', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id;
}

const email = async (org: Org, id: string) => (await api(org, 'GET', `/emails/${id}`)).body;
const suppression = async (org: Org, address: string) => api(org, 'GET', `/api/v1/suppressions/${address}`);
const eventsOf = async (id: string) =>
  (await ingress.platform.pg.query<{ type: string; recipient: string | null }>('SELECT type, recipient FROM mail_events WHERE message_id = $1 ORDER BY occurred_at, recipient', [id])).rows;

describe('bounces at hand-over', () => {
  it('suppresses (reason bounce) each recipient the relay refuses for good at RCPT TO, not those it defers or a refusal of the whole message', async () => {
    const org = await organization();
    relay.refuseRcpt.set('nobody@example.net', { code: 550, text: '5.1.1 no such user' });
    relay.refuseRcpt.set('nobody-else@example.net', { code: 550, text: '5.1.1 no such user' });
    relay.replyTo.set('content-refused@example.net', { code: 554, text: '5.7.1 message refused' });
    const partly = await send(org, { to: ['nobody@example.net', 'somebody@example.net'] });
    const wholly = await send(org, { to: ['nobody-else@example.net'] });
    const refusedMessage = await send(org, { to: ['content-refused@example.net'] });
    const sender = await startSender();
    try {
      await eventually(async () => (await email(org, partly)).last_event === 'delivered' && (await email(org, wholly)).last_event === 'bounced' && (await email(org, refusedMessage)).last_event === 'bounced', 60_000);
    } finally {
      await stopSender(sender);
    }
    expect(relay.byMessageId(partly).map((m) => m.to)).toEqual([['somebody@example.net']]);
    expect((await suppression(org, 'nobody@example.net')).body).toMatchObject({ email: 'nobody@example.net', reason: 'bounce' });
    expect((await suppression(org, 'nobody-else@example.net')).body).toMatchObject({ email: 'nobody-else@example.net', reason: 'bounce' });
    expect((await suppression(org, 'somebody@example.net')).status).toBe(404);
    // A refusal of the message (its content) says nothing about the address.
    expect((await suppression(org, 'content-refused@example.net')).status).toBe(404);
    expect(await eventsOf(partly)).toEqual(expect.arrayContaining([{ type: 'bounced', recipient: 'nobody@example.net' }, { type: 'delivered', recipient: null }]));
    expect((await email(org, partly)).attempts[0].response).toContain('nobody@example.net');
    // The next message leaves the address out when it is accepted.
    const later = await send(org, { to: ['nobody@example.net'] });
    expect((await email(org, later)).last_event).toBe('suppressed');
  }, 120_000);
});

describe('a bounce sent back to the return path', () => {
  it('names its message by the signed envelope sender, and suppresses that recipient', async () => {
    const org = await organization();
    const id = await send(org, { to: ['bounce-later@example.net'] });
    const sender = await startSender();
    try {
      await eventually(async () => relay.byMessageId(id).length === 1, 60_000);
    } finally {
      await stopSender(sender);
    }
    const returnPath = relay.byMessageId(id)[0]!.from;
    expect(returnPath).toMatch(new RegExp(`^bounces\\+${id}-[0-9a-f]{16}@`));
    // A DSN without a copy of the original (no Message-ID quoted): the return path alone names the message.
    const dsn = [
      'From: MAILER-DAEMON@mx.example.net', `To: ${returnPath}`, 'Subject: Undelivered', 'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="b"', '', '--b', 'Content-Type: text/plain', '', 'Gone.', '',
      '--b', 'Content-Type: message/delivery-status', '', 'Reporting-MTA: dns; mx.example.net', '',
      'Final-Recipient: rfc822; bounce-later@example.net', 'Action: failed', 'Status: 5.1.1', '', '--b--', '',
    ].join('\r\n');
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: ingress.app.inboundSmtpPort!, secure: false, ignoreTLS: true });
    try {
      await transport.sendMail({ envelope: { from: '', to: [returnPath] }, raw: dsn });
    } finally {
      transport.close();
    }
    expect((await suppression(org, 'bounce-later@example.net')).body).toMatchObject({ reason: 'bounce' });
    expect((await email(org, id)).last_event).toBe('bounced');
  }, 120_000);
});

describe('what a contact chose while its message waited', () => {
  it('is honoured at hand-over: a broadcast message to a contact since unsubscribed, out of the topic or suppressed is not sent', async () => {
    const org = await organization();
    const contactIds = new Map<string, string>();
    for (const name of ['stays', 'status', 'topic', 'suppressed']) {
      const res = await api(org, 'POST', '/api/v1/contacts', { email: `${name}@example.net` });
      expect(res.status).toBe(201);
      contactIds.set(name, res.body.id);
    }
    // The fan-out queues one message per contact; no sender runs yet, so they wait.
    const worker = await startWorkerKinds(['mail-broadcasts']);
    children.push(worker);
    const created = await api(org, 'POST', '/api/v1/broadcasts', { name: 'Waits', from: org.from, topic: 'news', subject: 'Hello', html: '<p>Hi</p>', text: 'Hi' });
    expect(created.status).toBe(201);
    expect((await api(org, 'POST', `/api/v1/broadcasts/${created.body.id}/send`, {})).status).toBe(200);
    const messages = (await eventually(async () => {
      const { rows } = await ingress.platform.pg.query<{ id: string; to: string }>(
        'SELECT m.id, m.to_addresses[1] AS to FROM mail_broadcast_recipients r JOIN mail_messages m ON m.id = r.message_id WHERE r.broadcast_id = $1', [created.body.id]);
      return rows.length === 4 ? new Map(rows.map((r) => [r.to.split('@')[0]!, r.id])) : undefined;
    }, 60_000))!;
    // Meanwhile: one unsubscribes altogether, one from the topic, one is suppressed.
    expect((await api(org, 'PATCH', `/api/v1/contacts/${contactIds.get('status')}`, { status: 'unsubscribed' })).status).toBe(200);
    expect((await api(org, 'PUT', `/api/v1/contacts/${contactIds.get('topic')}/topics/news`, { subscribed: false })).status).toBe(200);
    expect((await api(org, 'POST', '/api/v1/suppressions', { email: 'suppressed@example.net' })).status).toBeLessThan(300);
    const sender = await startSender();
    try {
      await eventually(async () => (await email(org, messages.get('stays')!)).last_event === 'delivered', 60_000);
      for (const name of ['status', 'topic', 'suppressed']) await eventually(async () => (await email(org, messages.get(name)!)).last_event === 'suppressed', 30_000);
    } finally {
      await stopSender(sender);
      await stopChild(worker);
      children.splice(children.indexOf(worker), 1);
    }
    for (const name of ['status', 'topic', 'suppressed']) expect(relay.byMessageId(messages.get(name)!)).toHaveLength(0);
    expect(relay.byMessageId(messages.get('stays')!)).toHaveLength(1);
    // Each says why.
    expect((await email(org, messages.get('status')!)).attempts).toEqual([expect.objectContaining({ outcome: 'skipped', response: expect.stringContaining('unsubscribed') })]);
    expect((await email(org, messages.get('topic')!)).attempts).toEqual([expect.objectContaining({ outcome: 'skipped', response: expect.stringContaining('news') })]);
    expect((await email(org, messages.get('suppressed')!)).attempts).toEqual([expect.objectContaining({ outcome: 'skipped', response: expect.stringContaining('suppression') })]);
  }, 180_000);

  it('is honoured for a message of /emails about a topic: a recipient who left the topic is left out, the others get it', async () => {
    const org = await organization();
    const contact = (await api(org, 'POST', '/api/v1/contacts', { email: 'left@example.net' })).body;
    const id = await send(org, { to: ['left@example.net', 'stays@example.net'], topic_id: org.topicId });
    const alone = await send(org, { to: ['left@example.net'], topic_id: 'news' });
    expect((await api(org, 'PUT', `/api/v1/contacts/${contact.id}/topics/news`, { subscribed: false })).status).toBe(200);
    const sender = await startSender();
    try {
      await eventually(async () => (await email(org, id)).last_event === 'delivered' && (await email(org, alone)).last_event === 'suppressed', 60_000);
    } finally {
      await stopSender(sender);
    }
    expect(relay.byMessageId(id).map((m) => m.to)).toEqual([['stays@example.net']]);
    expect(relay.byMessageId(alone)).toHaveLength(0);
  }, 120_000);
});

describe('one-click unsubscribe of a message to several recipients', () => {
  it('gives each recipient a copy whose link unsubscribes that recipient, and only it', async () => {
    const org = await organization();
    const id = await send(org, { to: ['first@example.net', 'Second <second@example.net>'], cc: ['third@example.net'], topic_id: org.topicId });
    const sender = await startSender();
    try {
      await eventually(async () => relay.byMessageId(id).length === 3, 60_000);
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      await stopSender(sender);
    }
    const copies = relay.byMessageId(id);
    expect(copies.map((c) => c.to).sort()).toEqual([['first@example.net'], ['second@example.net'], ['third@example.net']]);
    expect((await email(org, id)).last_event).toBe('delivered');
    const second = copies.find((c) => c.to[0] === 'second@example.net')!;
    const parsed = await simpleParser(second.raw);
    // Every copy shows the same To and Cc, as one message to several people does.
    expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value.map((a) => a.address) : []).toEqual(['first@example.net', 'second@example.net']);
    const url = /^List-Unsubscribe:\s*<([^>]+)>/im.exec(second.raw)![1]!;
    expect(parsed.text).toContain(url);
    const posted = await fetch(`${ingress.url}${new URL(url).pathname}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    expect(posted.status).toBe(200);
    const topics = async (address: string) => {
      const res = await api(org, 'GET', `/api/v1/contacts/${address}/topics`);
      return res.status === 404 ? 'no contact' : res.body.data.find((t: { topic: { slug: string } }) => t.topic.slug === 'news')?.subscribed;
    };
    expect(await topics('second@example.net')).toBe(false);
    expect(await topics('first@example.net')).toBe('no contact');
    expect(await topics('third@example.net')).toBe('no contact');
  }, 120_000);
});

describe('a message over a cap lowered after it was accepted', () => {
  it('fails at once with the cap named, instead of waiting for a day that never comes', async () => {
    const org = await organization({ daily_send_cap: 5 });
    const id = await send(org, { to: ['a@example.net', 'b@example.net', 'c@example.net'] });
    const patched = await call(ingress.url, 'PATCH', `/admin/v1/organizations/${org.organizationId}`, { ...adminOptions, body: { daily_send_cap: 2 } });
    expect(patched.status).toBe(200);
    const sender = await startSender();
    try {
      const failed = await eventually(async () => {
        const body = await email(org, id);
        return body.last_event === 'failed' && body;
      }, 30_000);
      expect(failed.attempts).toEqual([expect.objectContaining({ outcome: 'skipped', response: expect.stringMatching(/3 recipients.*organization's daily send cap of 2/) })]);
    } finally {
      await stopSender(sender);
    }
    expect(relay.byMessageId(id)).toHaveLength(0);
  }, 120_000);
});
