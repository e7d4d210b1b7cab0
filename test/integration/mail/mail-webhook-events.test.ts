// The webhook events beyond delivered/bounced/complained/opened/clicked, each
// made by the real change it tells of (a hand-over, a scheduled or suppressed
// email, a deferral, a last failed attempt, a contact written by the API or an
// import, a broadcast finished) and carried by mail_events → mail.events → the
// mail-webhooks worker to real HTTPS receivers: delivered once to an endpoint
// subscribed to it, signed (standardwebhooks verifies), in Resend's shape, and
// never to an endpoint of the organization that is not subscribed to it.
// Alone: it runs a sender (which takes every file's queued mail), a broadcast
// worker and a mail-webhooks worker with its own CA (the run's mail dispatcher).
import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_WEBHOOK_EVENTS } from '../../../src/mail/webhooks/mail-webhook-events.ts';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
import { startWorkerKinds, stopChild, type Child } from '../../support/processes.ts';
import { makeTestCa, type TestCa } from '../../support/links/test-ca.ts';
import type { Receiver } from '../../support/links/webhook-receiver.ts';
import { startSmtpCapture, type SmtpCapture } from '../../support/mail/smtp-capture.ts';
import { startMailSender, stopMailSender } from '../../support/mail/sender.ts';
import { organizationWithSdk, receiversOf, signatureHeaders, startMailWebhooks } from '../../support/mail/webhooks.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

let ca: TestCa;
let ingress: TestIngress;
let relay: SmtpCapture;
let sender: Child;
let broadcasts: Child;
let worker: Child;
const receivers = receiversOf(() => ca);

// Its own databases: see vitest.config.ts (why this file may run side by side).
useOwnDatabases();

beforeAll(async () => {
  ca = makeTestCa();
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000', WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
  relay = await startSmtpCapture();
  process.env.RESEND_BASE_URL = ingress.url;
  [sender, broadcasts, worker] = await Promise.all([
    startMailSender({ SMTP_URL: relay.url, MAIL_RETRY_BASE_MS: '200' }),
    startWorkerKinds(['mail-broadcasts'], {}),
    startMailWebhooks(ca),
  ]);
}, 120_000);

afterAll(async () => {
  await stopChild(worker);
  await stopChild(broadcasts);
  if (sender) await stopMailSender(sender);
  await receivers.closeAll();
  await relay?.close();
  await ingress?.close();
}, 30_000);

type Org = Awaited<ReturnType<typeof organizationWithSdk>>;
interface Hooks {
  org: Org;
  /** Subscribed to `events` only. */
  wanted: Receiver;
  secret: string;
  /** Subscribed to every other event. */
  others: Receiver;
}

/** An organization with two endpoints: one subscribed to `events`, the other to all the rest. */
async function hooksFor(events: string[]): Promise<Hooks> {
  const org = await organizationWithSdk(ingress.url);
  const wanted = await receivers.start();
  const others = await receivers.start();
  const created = await org.resend.webhooks.create({ endpoint: wanted.url, events: events as never });
  expect(created.error).toBeNull();
  const rest = MAIL_WEBHOOK_EVENTS.filter((e) => !events.includes(e));
  expect((await org.resend.webhooks.create({ endpoint: others.url, events: rest as never })).error).toBeNull();
  return { org, wanted, secret: created.data!.signing_secret, others };
}

const bodyOf = (r: Receiver['received'][number]) => JSON.parse(r.body) as { type: string; created_at: string; data: Record<string, any> };
const ofType = (r: Receiver, type: string) => r.received.filter((x) => bodyOf(x).type === type);

/** Waits for `n` requests of `type` at the subscribed endpoint, then checks each is signed, once per webhook-id, and absent from the other endpoint. */
async function received(h: Hooks, type: string, n = 1) {
  await eventually(async () => ofType(h.wanted, type).length >= n, 30_000);
  // Time for a duplicate or a stray delivery to show.
  await new Promise((r) => setTimeout(r, 1500));
  const got = ofType(h.wanted, type);
  expect(got).toHaveLength(n);
  expect(new Set(got.map((x) => x.headers['webhook-id'])).size).toBe(n);
  const wh = new Webhook(h.secret);
  for (const request of got) {
    expect(wh.verify(request.body, request.headers as Record<string, string>)).toEqual(JSON.parse(request.body));
    expect(h.org.resend.webhooks.verify({ payload: request.body, headers: signatureHeaders(request), webhookSecret: h.secret })).toEqual(JSON.parse(request.body));
  }
  expect(ofType(h.others, type)).toEqual([]);
  return got.map(bodyOf);
}

const send = async (org: Org, body: Record<string, unknown>) => {
  const res = await call(ingress.url, 'POST', '/emails', { key: org.key, body: { from: org.from, subject: 'Order shipped', text: 'On its way', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id as string;
};
const api = (org: Org, method: string, path: string, body?: unknown) => call(ingress.url, method, path, { key: org.key, ...(body === undefined ? {} : { body }) });

describe('email events', () => {
  it('email.sent: the relay took the message (beside email.delivered, under its own webhook-id)', async () => {
    const h = await hooksFor(['email.sent']);
    const id = await send(h.org, { to: ['reader@example.net'], tags: [{ name: 'kind', value: 'shipping' }] });
    const [sent] = await received(h, 'email.sent');
    expect(sent).toMatchObject({ type: 'email.sent', created_at: expect.any(String), data: { email_id: id, from: h.org.from, to: ['reader@example.net'], subject: 'Order shipped', tags: { kind: 'shipping' } } });
    // The other endpoint has email.delivered for the same hand-over, under another webhook-id.
    await eventually(async () => ofType(h.others, 'email.delivered').length === 1, 30_000);
    expect(ofType(h.others, 'email.delivered')[0]!.headers['webhook-id']).not.toBe(ofType(h.wanted, 'email.sent')[0]!.headers['webhook-id']);
  });

  it('email.scheduled: a message accepted with a future scheduled_at', async () => {
    const h = await hooksFor(['email.scheduled']);
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const id = await send(h.org, { to: ['later@example.net'], scheduled_at: at });
    const [scheduled] = await received(h, 'email.scheduled');
    expect(scheduled!.data).toMatchObject({ email_id: id, to: ['later@example.net'], subject: 'Order shipped' });
    // Canceled so that no sender of the run sends it later.
    expect((await api(h.org, 'POST', `/emails/${id}/cancel`)).status).toBe(200);
  });

  it('email.delivery_delayed per deferred attempt, then email.failed once when the last attempt fails', async () => {
    const h = await hooksFor(['email.delivery_delayed', 'email.failed']);
    relay.replyTo.set('slow@example.net', { code: 451, text: '4.3.0 try again later' });
    try {
      const id = await send(h.org, { to: ['slow@example.net'] });
      // Four attempts (MAX_ATTEMPTS): three deferrals, then the failure.
      const delayed = await received(h, 'email.delivery_delayed', 3);
      for (const d of delayed) expect(d.data).toMatchObject({ email_id: id, to: ['slow@example.net'] });
      const [failed] = await received(h, 'email.failed');
      expect(failed!.data).toMatchObject({ email_id: id, failed: { reason: expect.stringContaining('try again later') } });
    } finally {
      relay.replyTo.delete('slow@example.net');
    }
  });

  it('email.suppressed: every recipient suppressed, at acceptance and at the sender', async () => {
    const h = await hooksFor(['email.suppressed']);
    expect((await api(h.org, 'POST', '/api/v1/suppressions', { email: 'gone@example.net' })).status).toBeLessThan(300);
    const atAcceptance = await send(h.org, { to: ['gone@example.net'] });
    const [first] = await received(h, 'email.suppressed');
    expect(first!.data).toMatchObject({ email_id: atAcceptance, to: ['gone@example.net'], suppressed: { message: expect.stringContaining('gone@example.net'), type: 'OnAccountSuppressionList' } });

    // Accepted while deliverable, suppressed while it waited: the sender leaves it unsent.
    const waiting = await send(h.org, { to: ['soon-gone@example.net'], scheduled_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await api(h.org, 'POST', '/api/v1/suppressions', { email: 'soon-gone@example.net' })).status).toBeLessThan(300);
    expect((await api(h.org, 'PATCH', `/emails/${waiting}`, { scheduled_at: new Date().toISOString() })).status).toBe(200);
    const both = await received(h, 'email.suppressed', 2);
    expect(both[1]!.data).toMatchObject({ email_id: waiting, suppressed: { message: expect.stringContaining('Not sent') } });
  });
});

describe('contact events', () => {
  it('contact.created, contact.updated and contact.deleted from the API, with the contact', async () => {
    const h = await hooksFor(['contact.created', 'contact.updated', 'contact.deleted']);
    const created = await api(h.org, 'POST', '/api/v1/contacts', { email: 'Ada@Example.net', first_name: 'Ada' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await api(h.org, 'PATCH', `/api/v1/contacts/${id}`, { last_name: 'Lovelace', status: 'unsubscribed' })).status).toBe(200);
    expect((await api(h.org, 'DELETE', `/api/v1/contacts/${id}`)).status).toBe(200);

    const [c] = await received(h, 'contact.created');
    expect(c!.data).toMatchObject({ id, email: 'ada@example.net', first_name: 'Ada', last_name: null, unsubscribed: false, created_at: created.body.created_at });
    const [u] = await received(h, 'contact.updated');
    expect(u!.data).toMatchObject({ id, email: 'ada@example.net', first_name: 'Ada', last_name: 'Lovelace', unsubscribed: true, status: 'unsubscribed' });
    const [d] = await received(h, 'contact.deleted');
    expect(d!.data).toMatchObject({ id, email: 'ada@example.net', last_name: 'Lovelace' });
  });

  it('an import sends one event per contact it creates or updates', async () => {
    const h = await hooksFor(['contact.created', 'contact.updated']);
    expect((await api(h.org, 'POST', '/api/v1/contacts', { email: 'known@example.net' })).status).toBe(201);
    await received(h, 'contact.created');
    const raw = ['known@example.net', 'new-1@example.net', 'new-2@example.net'].map((email, i) => JSON.stringify({ email, first_name: `N${i}` })).join('\n');
    const res = await call(ingress.url, 'POST', '/api/v1/contacts/import', { key: h.org.key, raw, headers: { 'content-type': 'application/x-ndjson' } });
    expect(res.body).toMatchObject({ created: 2, updated: 1 });
    const createdNow = (await received(h, 'contact.created', 3)).slice(1);
    expect(createdNow.map((b) => b.data.email).sort()).toEqual(['new-1@example.net', 'new-2@example.net']);
    const [updated] = await received(h, 'contact.updated');
    expect(updated!.data).toMatchObject({ email: 'known@example.net', first_name: 'N0' });
  });
});

describe('broadcast events', () => {
  it('broadcast.sent: the broadcast finished, with the broadcast', async () => {
    const h = await hooksFor(['broadcast.sent']);
    expect((await api(h.org, 'POST', '/api/v1/topics', { slug: 'news', name: 'News', default_subscription: 'opt_in' })).status).toBe(201);
    expect((await api(h.org, 'POST', '/api/v1/contacts', { email: 'fan@example.net' })).status).toBe(201);
    const b = await api(h.org, 'POST', '/api/v1/broadcasts', { name: 'Spring', from: h.org.from, topic: 'news', subject: 'Hello', html: '<p>Hi</p>', text: 'Hi' });
    expect(b.status, JSON.stringify(b.body)).toBe(201);
    expect((await api(h.org, 'POST', `/api/v1/broadcasts/${b.body.id}/send`)).status).toBe(200);
    const [sent] = await received(h, 'broadcast.sent');
    expect(sent!.data).toMatchObject({ object: 'broadcast', id: b.body.id, name: 'Spring', status: 'sent', stats: { eligible: 1, queued: 1 }, finished_at: expect.any(String) });
  });
});

describe('the mail.events value schema', () => {
  it('is a BACKWARD-compatible evolution of the schema before contact and broadcast events (the registry accepts it)', async () => {
    // The schema as it was (message_id required; no contact_id, broadcast_id, data).
    const before = {
      type: 'record', name: 'MailEvent', namespace: 'linkmail.mail',
      fields: [
        { name: 'event_id', type: 'string' }, { name: 'organization_id', type: 'string' }, { name: 'message_id', type: 'string' }, { name: 'type', type: 'string' },
        { name: 'recipient', type: ['null', 'string'], default: null }, { name: 'url', type: ['null', 'string'], default: null }, { name: 'detail', type: ['null', 'string'], default: null },
        { name: 'occurred_at', type: { type: 'long', logicalType: 'timestamp-millis' } },
      ],
    };
    const now = JSON.parse(readFileSync(new URL('../../../schemas/mail-event.avsc', import.meta.url), 'utf8'));
    const registry = ingress.platform.config.SCHEMA_REGISTRY_URL;
    const subject = `${ingress.platform.config.TOPIC_PREFIX}.mail-event-evolution-value`;
    const post = async (path: string, body: unknown, method = 'POST') => (await fetch(`${registry}${path}`, { method, headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' }, body: JSON.stringify(body) })).json();
    await post(`/config/${subject}`, { compatibility: 'BACKWARD' }, 'PUT');
    expect(await post(`/subjects/${subject}/versions`, { schema: JSON.stringify(before) })).toMatchObject({ id: expect.any(Number) });
    expect(await post(`/compatibility/subjects/${subject}/versions/latest`, { schema: JSON.stringify(now) })).toMatchObject({ is_compatible: true });
    expect(await post(`/subjects/${subject}/versions`, { schema: JSON.stringify(now) })).toMatchObject({ id: expect.any(Number) });
  });
});
