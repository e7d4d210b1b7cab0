// Webhooks for mail events through the real stack and Resend's own SDK: the
// SDK manages webhooks (create, get, list, update, rotate, remove) and reads
// the delivery log; a real message goes through the sender; the mail-webhooks
// worker (its own process) delivers Standard Webhooks requests to real HTTPS
// receivers with a test CA, which resend.webhooks.verify and the
// standardwebhooks library both accept; replay, retries, permanent 4xx, and a
// hanging receiver beside a healthy one; and the worker killed with SIGKILL
// twice while it delivers 800 events. Its own databases: its sender and worker take only its mail
// and deliveries, and no other file's ingress relays its mail events to another topic.
import { Resend } from 'resend';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
import { startTs, stopChild, waitForOutput, type Child } from '../../support/processes.ts';
import { makeTestCa, type TestCa } from '../../support/links/test-ca.ts';
import { organizationWithKey } from '../../support/mail/organizations.ts';
import { startSmtpCapture, type SmtpCapture } from '../../support/mail/smtp-capture.ts';
import { startMailSender, stopMailSender } from '../../support/mail/sender.ts';
import { emitMailEvents, organizationWithSdk, receiversOf, signatureHeaders as headersOf, startMailWebhooks } from '../../support/mail/webhooks.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

let ca: TestCa;
let ingress: TestIngress;
let relay: SmtpCapture;
let sender: Child;
let worker: Child;
const receivers = receiversOf(() => ca);
const receiver = receivers.start;
const orgWithSdk = () => organizationWithSdk(ingress.url);

useOwnDatabases();

beforeAll(async () => {
  ca = makeTestCa();
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000', WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
  relay = await startSmtpCapture();
  process.env.RESEND_BASE_URL = ingress.url;
  [sender, worker] = await Promise.all([startMailSender({ SMTP_URL: relay.url }), startMailWebhooks(ca)]);
}, 120_000);

afterAll(async () => {
  await stopChild(worker);
  if (sender) await stopMailSender(sender);
  await receivers.closeAll();
  await relay?.close();
  await ingress?.close();
}, 30_000);

/** A stored message of the organization, for events to be about. */
async function message(org: { key: string; from: string }) {
  const res = await call(ingress.url, 'POST', '/emails', { key: org.key, body: { from: org.from, to: ['reader@example.net'], subject: 'Order shipped', text: 'On its way', tags: [{ name: 'kind', value: 'shipping' }] } });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

describe('mail webhooks through the resend SDK', () => {
  it('create, get, list, update, rotate and remove work unchanged; bad input is a 4xx with a stable code', async () => {
    const { resend, key } = await orgWithSdk();
    const created = await resend.webhooks.create({ endpoint: 'https://hooks.example.com/mail', events: ['email.delivered', 'email.bounced'] });
    expect(created.error).toBeNull();
    expect(created.data).toMatchObject({ object: 'webhook', signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]+$/) });
    const id = created.data!.id;

    const got = await resend.webhooks.get(id);
    expect(got.data).toMatchObject({ object: 'webhook', id, endpoint: 'https://hooks.example.com/mail', events: ['email.delivered', 'email.bounced'], status: 'enabled', signing_secret: created.data!.signing_secret });
    const second = await resend.webhooks.create({ endpoint: 'https://hooks.example.com/other', events: ['contact.created'] });
    const listed = await resend.webhooks.list();
    expect(listed.data).toMatchObject({ object: 'list', has_more: false });
    expect(listed.data!.data.map((w) => w.id)).toEqual([second.data!.id, id]);
    const paged = await resend.webhooks.list({ limit: 1 });
    expect([paged.data!.has_more, paged.data!.data[0]!.id]).toEqual([true, second.data!.id]);
    expect((await resend.webhooks.list({ limit: 1, after: second.data!.id })).data!.data.map((w) => w.id)).toEqual([id]);

    const updated = await resend.webhooks.update(id, { events: ['email.opened'], status: 'disabled' });
    expect(updated.data).toEqual({ object: 'webhook', id });
    expect((await resend.webhooks.get(id)).data).toMatchObject({ events: ['email.opened'], status: 'disabled' });

    const rotated = await resend.webhooks.rotateSigningSecret(id);
    expect(rotated.data).toMatchObject({ object: 'webhook', id, signing_secret: expect.stringMatching(/^whsec_/) });
    expect(rotated.data!.signing_secret).not.toBe(created.data!.signing_secret);
    expect((await resend.webhooks.get(id)).data!.signing_secret).toBe(rotated.data!.signing_secret);

    // Bad input: stable codes, nothing stored.
    const bad = async (body: unknown) => {
      const res = await call(ingress.url, 'POST', '/webhooks', { key, body });
      expect([res.status, res.body.name]).toEqual([400, 'validation_error']);
      return res.body.error.code;
    };
    expect(await bad({ endpoint: 'http://hooks.example.com/x', events: ['email.sent'] })).toBe('webhook_url_not_https');
    expect(await bad({ endpoint: 'https://10.0.0.1/x', events: ['email.sent'] })).toBe('webhook_url_private');
    expect(await bad({ endpoint: 'hooks.example.com', events: ['email.sent'] })).toBe('invalid_url');
    expect([400]).toContain((await call(ingress.url, 'POST', '/webhooks', { key, body: { endpoint: 'https://hooks.example.com/x', events: ['email.teleported'] } })).status);
    expect([400]).toContain((await call(ingress.url, 'POST', '/webhooks', { key, body: { endpoint: 'https://hooks.example.com/x', events: [] } })).status);
    expect((await call(ingress.url, 'PATCH', `/webhooks/${id}`, { key, body: { status: 'paused' } })).status).toBe(400);
    expect((await resend.webhooks.list()).data!.data).toHaveLength(2);

    // Another organization sees none of it; unknown and malformed ids are 404.
    const stranger = new Resend((await organizationWithKey(ingress.url)).key);
    expect((await stranger.webhooks.get(id)).error).toMatchObject({ statusCode: 404 });
    expect((await stranger.webhooks.remove(id)).error).toMatchObject({ statusCode: 404 });
    expect((await resend.webhooks.get('not-a-uuid')).error).toMatchObject({ statusCode: 404 });
    expect((await resend.webhooks.events.list({ webhookId: id })).data).toEqual({ object: 'list', has_more: false, data: [] });
    expect((await resend.webhooks.events.get({ webhookId: id, eventId: '00000000-0000-4000-8000-000000000000' })).error).toMatchObject({ statusCode: 404 });

    const removed = await resend.webhooks.remove(id);
    expect(removed.data).toEqual({ object: 'webhook', id, deleted: true });
    expect((await resend.webhooks.get(id)).error).toMatchObject({ statusCode: 404 });
    // A send key may not manage webhooks: Resend's 401 restricted_api_key, our code beside it.
    const sendKey = await organizationWithKey(ingress.url, { kind: 'send' });
    const refused = await call(ingress.url, 'GET', '/webhooks', { key: sendKey.key });
    expect([refused.status, refused.body.name, refused.body.error.code]).toEqual([401, 'restricted_api_key', 'insufficient_permissions']);
  });

  it('delivers a real message\'s events, signed so that resend.webhooks.verify and standardwebhooks accept them; the log and replay work', async () => {
    const org = await orgWithSdk();
    const hook = await receiver();
    const created = await org.resend.webhooks.create({ endpoint: hook.url, events: ['email.delivered', 'email.clicked', 'email.bounced'] });
    const { id: webhookId, signing_secret: secret } = created.data!;

    const sent = await org.resend.emails.send({ from: org.from, to: ['reader@example.net'], subject: 'Hello webhooks', text: 'Hi', tags: [{ name: 'kind', value: 'welcome' }] });
    const emailId = sent.data!.id;
    await eventually(async () => hook.received.some((r) => JSON.parse(r.body).type === 'email.delivered'), 30_000);
    const [click] = await emitMailEvents(ingress.platform, [{ organization_id: org.organizationId, message_id: emailId, type: 'clicked', url: 'https://example.com/pricing' }]);
    await eventually(async () => hook.received.length >= 2, 30_000);

    const wh = new Webhook(secret);
    for (const request of hook.received) {
      const verified = org.resend.webhooks.verify({ payload: request.body, headers: headersOf(request), webhookSecret: secret });
      expect(verified).toEqual(JSON.parse(request.body));
      expect(wh.verify(request.body, request.headers as Record<string, string>)).toEqual(JSON.parse(request.body));
      // A changed body fails both.
      expect(() => wh.verify(request.body.replace('reader', 'intruder'), request.headers as Record<string, string>)).toThrow();
    }
    const delivered = hook.received.find((r) => JSON.parse(r.body).type === 'email.delivered')!;
    expect(JSON.parse(delivered.body)).toMatchObject({
      type: 'email.delivered', created_at: expect.any(String),
      data: { email_id: emailId, from: org.from, to: ['reader@example.net'], subject: 'Hello webhooks', tags: { kind: 'welcome' }, created_at: expect.any(String) },
    });
    const clicked = hook.received.find((r) => JSON.parse(r.body).type === 'email.clicked')!;
    expect(clicked.headers['webhook-id']).toBe(click);
    expect(JSON.parse(clicked.body).data).toMatchObject({ email_id: emailId, click: { link: 'https://example.com/pricing' } });

    // The delivery log, through the SDK.
    const events = await org.resend.webhooks.events.list({ webhookId });
    expect(events.data!.data.map((e) => [e.type, e.status])).toEqual([['email.clicked', 'success'], ['email.delivered', 'success']]);
    const one = await org.resend.webhooks.events.get({ webhookId, eventId: click! });
    expect(one.data).toMatchObject({ object: 'webhook_event', id: click, type: 'email.clicked', status: 'success', next_attempt_at: null, payload: JSON.parse(clicked.body) });
    const attempts = await org.resend.webhooks.events.attempts.list({ webhookId, eventId: click! });
    expect(attempts.data!.data).toHaveLength(1);
    expect(attempts.data!.data[0]).toMatchObject({ http_status_code: 200, sent_at: expect.any(String) });

    // Replay: the same body and webhook-id again, freshly signed.
    const before = hook.received.length;
    const replayed = await org.resend.webhooks.events.replay({ webhookId, eventId: click! });
    expect(replayed.data).toEqual({ object: 'webhook_event', id: click });
    await eventually(async () => hook.received.length > before, 20_000);
    const again = hook.received.at(-1)!;
    expect([again.headers['webhook-id'], again.body]).toEqual([click, clicked.body]);
    expect(org.resend.webhooks.verify({ payload: again.body, headers: headersOf(again), webhookSecret: secret })).toMatchObject({ type: 'email.clicked' });
    await eventually(async () => (await org.resend.webhooks.events.attempts.list({ webhookId, eventId: click! })).data!.data.length === 2, 10_000);
    expect((await org.resend.webhooks.events.replay({ webhookId, eventId: '00000000-0000-4000-8000-000000000000' })).error).toMatchObject({ statusCode: 404 });

    // After a rotation both secrets verify, each on its own, during the grace period.
    const rotated = (await org.resend.webhooks.rotateSigningSecret(webhookId)).data!.signing_secret;
    const n = hook.received.length;
    await emitMailEvents(ingress.platform, [{ organization_id: org.organizationId, message_id: emailId, type: 'clicked', url: 'https://example.com/after-rotation' }]);
    await eventually(async () => hook.received.length > n, 20_000);
    const latest = hook.received.at(-1)!;
    expect(String(latest.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(new Webhook(rotated).verify(latest.body, latest.headers as Record<string, string>)).toMatchObject({ type: 'email.clicked' });
    expect(new Webhook(secret).verify(latest.body, latest.headers as Record<string, string>)).toMatchObject({ type: 'email.clicked' });
  });

  it('retries 5xx, 408 and 429 with growing waits until a 2xx; any other 4xx is final after one attempt', async () => {
    const org = await orgWithSdk();
    const emailId = await message(org);
    const flaky = await receiver((n) => [503, 429, 408, 200][n - 1] ?? 200);
    const refusing = await receiver(() => 410);
    const a = (await org.resend.webhooks.create({ endpoint: flaky.url, events: ['email.opened'] })).data!.id;
    const b = (await org.resend.webhooks.create({ endpoint: refusing.url, events: ['email.opened'] })).data!.id;
    const [eventId] = await emitMailEvents(ingress.platform, [{ organization_id: org.organizationId, message_id: emailId, type: 'opened' }]);

    await eventually(async () => flaky.received.length === 4, 30_000);
    expect(new Set(flaky.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([eventId]));
    expect(new Set(flaky.received.map((r) => r.body)).size).toBe(1);
    const gaps = flaky.received.slice(1).map((r, i) => r.at - flaky.received[i]!.at);
    expect(gaps[0]).toBeGreaterThanOrEqual(250);
    expect(gaps[2]).toBeGreaterThan(gaps[0]!);
    await eventually(async () => (await org.resend.webhooks.events.get({ webhookId: a, eventId: eventId! })).data?.status === 'success', 10_000);
    const attempts = (await org.resend.webhooks.events.attempts.list({ webhookId: a, eventId: eventId! })).data!.data;
    expect(attempts.map((x) => x.http_status_code)).toEqual([200, 408, 429, 503]);

    await eventually(async () => (await org.resend.webhooks.events.get({ webhookId: b, eventId: eventId! })).data?.status === 'failed', 20_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(refusing.received).toHaveLength(1);
  });

  it('a hanging receiver does not delay another endpoint of the same organization, nor another organization', async () => {
    const org = await orgWithSdk();
    const other = await orgWithSdk();
    const emailId = await message(org);
    const otherEmail = await message(other);
    const hanging = await receiver(() => 'hang');
    const healthy = await receiver();
    const elsewhere = await receiver();
    await org.resend.webhooks.create({ endpoint: hanging.url, events: ['email.opened'] });
    await org.resend.webhooks.create({ endpoint: healthy.url, events: ['email.opened'] });
    await other.resend.webhooks.create({ endpoint: elsewhere.url, events: ['email.opened'] });

    const opens = (organization_id: string, message_id: string, n: number) => Array.from({ length: n }, () => ({ organization_id, message_id, type: 'opened' as const }));
    await emitMailEvents(ingress.platform, opens(org.organizationId, emailId, 30));
    await emitMailEvents(ingress.platform, opens(other.organizationId, otherEmail, 10));
    await eventually(async () => healthy.received.length === 30 && elsewhere.received.length === 10, 20_000);
    // The hanging endpoint holds at most its own slots (WEBHOOK_ENDPOINT_CONCURRENCY, 4).
    expect(hanging.open()).toBeLessThanOrEqual(4);
    expect(hanging.open()).toBeGreaterThan(0);
    hanging.answer = () => 200;
    hanging.release(200);
    await eventually(async () => new Set(hanging.received.map((r) => r.headers['webhook-id'])).size === 30, 30_000);
  });
});

describe('the mail-webhooks worker killed with SIGKILL during 800 events', () => {
  it('delivers every event at least once, each always under its own webhook-id', async () => {
    // Two kills among 800 events (at-least-once under one id does not depend on how many).
    const TOTAL = 800;
    const org = await orgWithSdk();
    const emailId = await message(org);
    // Some answers fail, so retries are pending when the worker dies too.
    const hook = await receiver(() => (Math.random() < 0.05 ? 500 : 200));
    const { signing_secret: secret, id: webhookId } = (await org.resend.webhooks.create({ endpoint: hook.url, events: ['email.clicked'] })).data!;
    // Short timeouts and leases: an attempt cut off by the kill is retried within seconds.
    const crashEnv = { WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_LEASE_MARGIN_MS: '300', WEBHOOK_ENDPOINT_CONCURRENCY: '16', WEBHOOK_WORKSPACE_CONCURRENCY: '16', MAIL_WEBHOOK_RETRY_DELAYS_MS: '200,400,800,1600,3200,6400' };
    const start = () => startTs('workers/run.ts', ['mail-webhooks'], { LOG_LEVEL: 'info', WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_CA_FILE: ca.caFile, WEBHOOK_POLL_MS: '50', ...crashEnv });
    await stopChild(worker, 'SIGKILL');
    worker = start();
    await waitForOutput(worker, 'worker process ready', 90_000);

    const distinct = () => new Set(hook.received.map((r) => r.headers['webhook-id'])).size;
    const emitting = emitMailEvents(ingress.platform, Array.from({ length: TOTAL }, (_, i) => ({ organization_id: org.organizationId, message_id: emailId, type: 'clicked' as const, url: `https://example.com/item/${i}` })));
    for (const after of [150, 450]) {
      await eventually(async () => distinct() >= after, 60_000, 20);
      await stopChild(worker, 'SIGKILL');
      worker = start();
      await waitForOutput(worker, 'worker process ready', 90_000);
    }
    const ids = await emitting;
    expect(ids).toHaveLength(TOTAL);
    await eventually(async () => distinct() === TOTAL, 60_000, 100);

    // Each event (told by its link) always came under one webhook-id, its event id; every request verifies.
    const { rows } = await ingress.platform.pg.query<{ id: string; url: string }>('SELECT id, url FROM mail_events WHERE id = ANY($1::uuid[])', [ids]);
    const idOfLink = new Map(rows.map((r) => [r.url, r.id]));
    const idsSeen = new Map<string, Set<string>>();
    const wh = new Webhook(secret);
    for (const request of hook.received) {
      const body = wh.verify(request.body, request.headers as Record<string, string>) as { data: { click: { link: string } } };
      const link = body.data.click.link;
      idsSeen.set(link, (idsSeen.get(link) ?? new Set()).add(String(request.headers['webhook-id'])));
    }
    expect(idsSeen.size).toBe(TOTAL);
    for (const [link, seen] of idsSeen) expect([...seen]).toEqual([idOfLink.get(link)]);
    // One delivery queued per event, however often mail.events was read again.
    const queued = await ingress.platform.pg.query<{ n: string }>('SELECT count(*) AS n FROM mail_webhook_deliveries WHERE endpoint_id = $1 AND redelivery_of IS NULL', [webhookId]);
    expect(Number(queued.rows[0]!.n)).toBe(TOTAL);
    console.log(`mail webhooks crash: ${hook.received.length} requests for ${TOTAL} events`);
  }, 120_000);
});
