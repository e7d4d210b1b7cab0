// Resend's SDK (`resend`, unmodified, pointed at the test ingress) cancels,
// reschedules and lists emails against us: POST /emails/:id/cancel, PATCH
// /emails/:id and GET /emails. A sender of this file's hands messages over to a
// relay of this file's, so that "canceled" is seen to mean never sent, also
// when cancels race the sender's hand-overs.
import { randomUUID } from 'node:crypto';
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
import type { Child } from '../../support/processes.ts';
import { mailKey, nextSecond, organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { startSmtpCapture, type SmtpCapture } from '../../support/mail/smtp-capture.ts';
import { startMailSender, stopMailSender } from '../../support/mail/sender.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

let ingress: TestIngress;
let relay: SmtpCapture;
let sender: Child;
let org: { organizationId: string; key: string; keyId: string };
let resend: Resend;
let from: string;

// Its own databases: see vitest.config.ts (why this file may run side by side).
useOwnDatabases();

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
  relay = await startSmtpCapture();
  sender = await startMailSender({ SMTP_URL: relay.url });
  org = await organizationWithKey(ingress.url);
  from = `Acme <hello@${(await verifiedDomain(ingress.url, org.key)).name}>`;
  process.env.RESEND_BASE_URL = ingress.url;
  resend = new Resend(org.key);
}, 120_000);

afterAll(async () => {
  if (sender) await stopMailSender(sender);
  await relay?.close();
  await ingress?.close();
});

const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
const delivery = async (id: string) =>
  (await ingress.platform.pg.query<{ state: string }>('SELECT state FROM mail_deliveries WHERE message_id = $1', [id])).rows[0]?.state ?? null;
const sent = (id: string) => relay.byMessageId(id).length;

describe('cancel (resend.emails.cancel)', () => {
  it('cancels scheduled emails, before and after the sender queued them: never sent, while one beside them goes', async () => {
    const send = async (subject: string) => (await resend.emails.send({ from, to: 'reader@example.com', subject, text: 'x', scheduledAt: inSeconds(4) })).data!.id;
    const early = await send('canceled before queueing');
    const earlyCancel = await resend.emails.cancel(early);
    expect(earlyCancel.error).toBeNull();
    expect(earlyCancel.data).toEqual({ object: 'email', id: early });

    const queued = await send('canceled in the queue');
    const control = await send('not canceled');
    await eventually(async () => (await delivery(queued)) === 'queued');
    expect((await resend.emails.cancel(queued)).data).toEqual({ object: 'email', id: queued });

    expect((await resend.emails.get(early)).data!.last_event).toBe('canceled');
    expect((await resend.emails.get(queued)).data!.last_event).toBe('canceled');
    await eventually(async () => sent(control) === 1, 30_000);
    // The sender has long passed their time (it looks every 200 ms).
    await new Promise((r) => setTimeout(r, 1500));
    expect(sent(early) + sent(queued)).toBe(0);
    expect(await delivery(queued)).toBe('canceled');
    expect([null, 'canceled']).toContain(await delivery(early));
    expect((await resend.emails.get(control)).data!.last_event).toBe('delivered');

    // Canceled already, or handed over: 409 with a stable code.
    expect((await resend.emails.cancel(queued)).error).toMatchObject({ name: 'validation_error', statusCode: 409, error: { code: 'not_cancelable' } });
    expect((await resend.emails.cancel(control)).error).toMatchObject({ name: 'validation_error', statusCode: 409, error: { code: 'not_cancelable' } });
  }, 60_000);

  it('a message a sender holds is not cancelable; a cancel that wins leaves nothing for a sender to take', async () => {
    const id = (await resend.emails.send({ from, to: 'held@example.com', subject: 'held', text: 'x', scheduledAt: inSeconds(3600) })).data!.id;
    await eventually(async () => (await delivery(id)) === 'queued');
    // A sender's hold, as send-queue.ts takes it.
    await ingress.platform.pg.query("UPDATE mail_deliveries SET state = 'sending', lease_until = now() + interval '1 minute', lease_token = gen_random_uuid() WHERE message_id = $1", [id]);
    const refused = await resend.emails.cancel(id);
    expect(refused.error).toMatchObject({ name: 'validation_error', statusCode: 409, error: { code: 'not_cancelable' } });
    expect(refused.error!.message).toContain('being handed over');
    await ingress.platform.pg.query("UPDATE mail_deliveries SET state = 'queued', lease_until = NULL, lease_token = NULL, next_attempt_at = now() WHERE message_id = $1", [id]);
    // Due now: the sender and the cancel race; whichever wins, a canceled message is never sent.
    const cancel = await resend.emails.cancel(id);
    if (cancel.error) {
      expect((cancel.error as any).error.code).toBe('not_cancelable');
      await eventually(async () => sent(id) === 1);
    } else {
      await new Promise((r) => setTimeout(r, 1500));
      expect(sent(id)).toBe(0);
    }
  }, 60_000);

  it('cancels raced against the sender\'s hand-overs: every cancel answered 200 is a message never sent, every 409 one sent', async () => {
    await nextSecond();
    const batch = await resend.batch.send(Array.from({ length: 40 }, (_, i) => ({ from, to: `race${i}@example.com`, subject: `race ${i}`, text: 'x' })));
    const ids = batch.data!.data.map((d) => d.id);
    // Once the sender has begun, cancels one after another, in the sender's order, while it sends 12
    // a second: the first ones lose (sent, or held by the sender for its hand-over under way), then
    // the cancels overtake the sender and the rest win.
    await eventually(async () => sent(ids[0]!) === 1, 30_000, 20);
    const outcomes = new Map<string, number>();
    for (const id of ids) {
      const res = await call(ingress.url, 'POST', `/emails/${id}/cancel`, { key: org.key });
      expect([200, 409]).toContain(res.status);
      if (res.status === 409) expect(res.body.error.code).toBe('not_cancelable');
      outcomes.set(id, res.status);
    }
    const lost = ids.filter((id) => outcomes.get(id) === 409);
    const won = ids.filter((id) => outcomes.get(id) === 200);
    expect(won.length).toBeGreaterThan(0);
    expect(lost.length).toBeGreaterThan(0);
    await eventually(async () => lost.every((id) => sent(id) === 1), 30_000);
    await eventually(async () => (await ingress.platform.pg.query("SELECT 1 FROM mail_deliveries WHERE message_id = ANY($1::uuid[]) AND state IN ('queued', 'sending', 'retrying')", [ids])).rowCount === 0, 30_000);
    expect(won.filter((id) => sent(id) > 0)).toEqual([]);
    for (const id of won) expect([null, 'canceled']).toContain(await delivery(id));
  }, 90_000);

  it('refuses what is not a cancelable email of the key: 404 for unknown ids, others\' and other domains\'; 401 restricted_api_key for a test key', async () => {
    const id = (await resend.emails.send({ from, to: 'a@example.com', subject: 'later', text: 'x', scheduledAt: inSeconds(3600) })).data!.id;
    expect((await call(ingress.url, 'POST', '/emails/not-a-uuid/cancel', { key: org.key })).status).toBe(404);
    expect((await call(ingress.url, 'POST', '/emails/00000000-0000-4000-8000-000000000000/cancel', { key: org.key })).body.name).toBe('not_found');
    const other = await organizationWithKey(ingress.url);
    expect((await call(ingress.url, 'POST', `/emails/${id}/cancel`, { key: other.key })).status).toBe(404);
    const restricted = await mailKey(ingress.url, org.organizationId, { domains: ['elsewhere.example.com'] });
    expect((await call(ingress.url, 'POST', `/emails/${id}/cancel`, { key: restricted.key })).status).toBe(404);
    const test = await mailKey(ingress.url, org.organizationId, { kind: 'test' });
    expect((await call(ingress.url, 'POST', `/emails/${id}/cancel`, { key: test.key })).body.error.code).toBe('insufficient_permissions');
    expect((await resend.emails.get(id)).data!.last_event).toBe('scheduled');
  });
});

describe('reschedule (resend.emails.update)', () => {
  it('moves a scheduled email to a new time; it goes then; once sent, or when never scheduled, 409', async () => {
    const id = (await resend.emails.send({ from, to: 'later@example.com', subject: 'moved', text: 'x', scheduledAt: inSeconds(3600) })).data!.id;
    await eventually(async () => (await delivery(id)) === 'queued');
    const at = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000).toISOString();
    const moved = await resend.emails.update({ id, scheduledAt: at });
    expect(moved.error).toBeNull();
    expect(moved.data).toEqual({ object: 'email', id });
    expect((await resend.emails.get(id)).data!.scheduled_at).toBe(at);
    await eventually(async () => sent(id) === 1, 30_000);
    expect(relay.byMessageId(id)[0]!.receivedAt).toBeGreaterThanOrEqual(Date.parse(at) - 50);
    expect((await resend.emails.update({ id, scheduledAt: inSeconds(60) })).error).toMatchObject({ name: 'validation_error', statusCode: 409, error: { code: 'not_schedulable' } });

    const now = (await resend.emails.send({ from, to: 'now@example.com', subject: 'now', text: 'x' })).data!.id;
    expect((await resend.emails.update({ id: now, scheduledAt: inSeconds(60) })).error).toMatchObject({ name: 'validation_error', statusCode: 409, error: { code: 'not_schedulable' } });
  }, 60_000);

  it('reschedules before the sender queued it; a canceled email cannot be rescheduled; bad times are 400', async () => {
    const id = (await resend.emails.send({ from, to: 'a@example.com', subject: 'x', text: 'x', scheduledAt: inSeconds(3600) })).data!.id;
    const at = inSeconds(7200);
    expect((await resend.emails.update({ id, scheduledAt: at })).error).toBeNull();
    await eventually(async () => (await delivery(id)) === 'queued');
    const { rows: [row] } = await ingress.platform.pg.query<{ next_attempt_at: Date }>('SELECT next_attempt_at FROM mail_deliveries WHERE message_id = $1', [id]);
    expect(row!.next_attempt_at.toISOString()).toBe(at);

    // English times as Resend takes them ("in 1 min") are good times now (send-time.ts); these are not.
    for (const scheduledAt of ['whenever', '2031-01-01', '2031-01-01T10:00:00']) {
      expect((await resend.emails.update({ id, scheduledAt })).error, scheduledAt).toMatchObject({ statusCode: 400 });
    }
    const empty = await call(ingress.url, 'PATCH', `/emails/${id}`, { key: org.key, body: {} });
    expect([empty.status, empty.body.name, empty.body.error.code]).toEqual([422, 'missing_required_field', 'missing_required_field']);
    expect((await call(ingress.url, 'PATCH', `/emails/${id}`, { key: org.key, body: { scheduled_at: at, subject: 'no' } })).body.error.code).toBe('unknown_field');
    expect((await resend.emails.cancel(id)).error).toBeNull();
    expect((await resend.emails.update({ id, scheduledAt: inSeconds(60) })).error).toMatchObject({ name: 'validation_error', statusCode: 409, error: { code: 'not_schedulable' } });
  });
});

describe('list (resend.emails.list)', () => {
  it('pages an organization\'s emails newest first with limit, after and before', async () => {
    const own = await organizationWithKey(ingress.url, { rate_limit: 1000 });
    const sender = `Shop <shop@${(await verifiedDomain(ingress.url, own.key)).name}>`;
    const client = new Resend(own.key);
    const batch = await client.batch.send(Array.from({ length: 25 }, (_, i) => ({ from: sender, to: `l${i}@example.com`, subject: `item ${i}`, text: 'x' })));
    const newestFirst = batch.data!.data.map((d) => d.id).reverse();

    const first = await client.emails.list({ limit: 10 });
    expect(first.error).toBeNull();
    expect(first.data).toMatchObject({ object: 'list', has_more: true });
    expect(first.data!.data[0]).toMatchObject({ id: newestFirst[0], from: sender, to: ['l24@example.com'], subject: 'item 24', cc: [], bcc: [], reply_to: [], scheduled_at: null });
    expect(first.data!.data[0]!.last_event).toMatch(/^(queued|delivered)$/);
    const second = await client.emails.list({ limit: 10, after: first.data!.data.at(-1)!.id });
    const third = await client.emails.list({ limit: 10, after: second.data!.data.at(-1)!.id });
    expect(second.data!.has_more).toBe(true);
    expect(third.data!.has_more).toBe(false);
    expect([...first.data!.data, ...second.data!.data, ...third.data!.data].map((e) => e.id)).toEqual(newestFirst);

    // before: the newer ones nearest the cursor, newest first.
    const back = await client.emails.list({ limit: 10, before: second.data!.data[0]!.id });
    expect(back.data!.data.map((e) => e.id)).toEqual(first.data!.data.map((e) => e.id));
    expect(back.data!.has_more).toBe(false);
    const near = await client.emails.list({ limit: 3, before: third.data!.data[0]!.id });
    expect(near.data!.data.map((e) => e.id)).toEqual(newestFirst.slice(17, 20));
    expect(near.data!.has_more).toBe(true);
    expect((await client.emails.list()).data!.data).toHaveLength(20);
  });

  it('lists a domain-restricted key\'s domains only, to a test key too; shows canceled emails; bad paging is 400', async () => {
    const own = await organizationWithKey(ingress.url, { rate_limit: 1000 });
    const [a, b] = [await verifiedDomain(ingress.url, own.key), await verifiedDomain(ingress.url, own.key)];
    const onA = (await call(ingress.url, 'POST', '/emails', { key: own.key, body: { from: `a@${a.name}`, to: 'x@example.com', subject: 'A', text: 'x', scheduled_at: inSeconds(3600) } })).body.id;
    const onB = (await call(ingress.url, 'POST', '/emails', { key: own.key, body: { from: `b@${b.name}`, to: 'x@example.com', subject: 'B', text: 'x' } })).body.id;
    expect((await call(ingress.url, 'POST', `/emails/${onA}/cancel`, { key: own.key })).status).toBe(200);

    const restricted = await mailKey(ingress.url, own.organizationId, { domains: [a.name], kind: 'test' });
    const seen = await new Resend(restricted.key).emails.list();
    expect(seen.data!.data.map((e) => [e.id, e.last_event])).toEqual([[onA, 'canceled']]);
    const all = await new Resend(own.key).emails.list();
    expect(all.data!.data.map((e) => e.id)).toEqual([onB, onA]);
    // A cursor the key cannot see is no cursor of its list.
    expect((await call(ingress.url, 'GET', `/emails?after=${onB}`, { key: restricted.key })).body.error.code).toBe('invalid_cursor');

    for (const query of ['after=nope', `after=${randomUUID()}`, `after=${onA}&before=${onB}`]) {
      const res = await call(ingress.url, 'GET', `/emails?${query}`, { key: own.key });
      expect([res.status, res.body.name, res.body.error.code], query).toEqual([400, 'validation_error', 'invalid_cursor']);
    }
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'cursor=abc']) {
      expect((await call(ingress.url, 'GET', `/emails?${query}`, { key: own.key })).status, query).toBe(400);
    }
    expect((await call(ingress.url, 'GET', '/emails', { key: org.key })).body.data.map((e: { id: string }) => e.id)).not.toContain(onA);
  });
});
