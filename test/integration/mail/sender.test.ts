// The mail sender (workers/run.ts mail-sender) on the real stack: messages accepted by
// the ingress go through mail.messages to sender processes and over SMTP to a relay
// of this file's (smtp-capture.ts), within the send rate and the daily allowances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
import type { Child } from '../../support/processes.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { startSmtpCapture, type SmtpCapture } from '../../support/mail/smtp-capture.ts';
import { movableClock, startMailSender, stopMailSender, type MovableClock } from '../../support/mail/sender.ts';

let ingress: TestIngress;
let relay: SmtpCapture;
const senders: Child[] = [];

beforeAll(async () => {
  ingress = await startIngress();
  relay = await startSmtpCapture();
}, 120_000);

afterAll(async () => {
  await Promise.all(senders.map((s) => stopMailSender(s)));
  await relay?.close();
  await ingress?.close();
});

async function sender(env: Record<string, string> = {}, fakeTime?: string | MovableClock): Promise<Child> {
  const child = await startMailSender({ SMTP_URL: relay.url, MAIL_RETRY_BASE_MS: '300', ...env }, fakeTime);
  senders.push(child);
  return child;
}

async function stopAll(): Promise<void> {
  await Promise.all(senders.splice(0).map((s) => stopMailSender(s)));
}

/** An organization with a full key and a verified domain. */
async function organization(options: { daily_send_cap?: number } = {}) {
  // A high request cap: a test sends batches right after making the domain with the same key.
  const org = await organizationWithKey(ingress.url, { ...options, rate_limit: 1000 });
  const domain = await verifiedDomain(ingress.url, org.key);
  return { ...org, domain: domain.name, from: `News <news@${domain.name}>` };
}

type Org = Awaited<ReturnType<typeof organization>>;

async function send(org: Org, to: string[], subject = 'Hello'): Promise<string> {
  const res = await call(ingress.url, 'POST', '/emails', { key: org.key, body: { from: org.from, to, subject, text: 'Hi there', html: '<p>Hi there</p>' } });
  expect(res.status).toBe(200);
  return res.body.id;
}

async function sendMany(org: Org, count: number, prefix: string): Promise<string[]> {
  const res = await call(ingress.url, 'POST', '/emails/batch', { key: org.key, body: Array.from({ length: count }, (_, i) => ({ from: org.from, to: [`${prefix}-${i}@example.net`], subject: `${prefix} ${i}`, text: 'Hi' })) });
  expect(res.status).toBe(200);
  return res.body.data.map((d: { id: string }) => d.id);
}

const email = async (org: Org, id: string) => (await call(ingress.url, 'GET', `/emails/${id}`, { key: org.key })).body;
const arrived = (ids: readonly string[]) => ids.filter((id) => relay.byMessageId(id).length > 0);
const usage = async (scope: string, day: string) =>
  (await ingress.platform.pg.query<{ used: number }>('SELECT used FROM mail_daily_usage WHERE scope = $1 AND day = $2', [scope, day])).rows[0]?.used ?? 0;

describe('the mail sender', () => {
  it('hands a message over once, DKIM-signed with its domain key, its Message-ID made from its id, leaving out addresses suppressed since it was accepted', async () => {
    const org = await organization();
    const kept = await send(org, ['Reader <reader@example.net>', 'late-optout@example.net']);
    const onlySuppressed = await send(org, ['late-optout@example.net']);
    // Suppressed after the messages were accepted, before any sender ran.
    expect((await call(ingress.url, 'POST', '/api/v1/suppressions', { key: org.key, body: { email: 'late-optout@example.net' } })).status).toBeLessThan(300);
    await sender();
    await eventually(async () => (await email(org, kept)).last_event === 'delivered' && (await email(org, onlySuppressed)).last_event === 'suppressed');
    const [message] = relay.byMessageId(kept);
    expect(relay.byMessageId(kept)).toHaveLength(1);
    expect(message!.messageId).toBe(`<${kept}@${org.domain}>`);
    expect(message!.to).toEqual(['reader@example.net']);
    // The envelope sender is the message's own signed return path (VERP), on its From domain.
    expect(message!.from).toMatch(new RegExp(`^bounces\\+${kept}-[0-9a-f]{16}@${org.domain.replace(/\./g, '\\.')}$`));
    expect(message!.raw).toMatch(new RegExp(`^DKIM-Signature:[^]*?d=${org.domain.replace(/\./g, '\\.')};`, 'm'));
    expect(relay.byMessageId(onlySuppressed)).toHaveLength(0);
    const body = await email(org, kept);
    expect(body.attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: 'delivered' })]);
  }, 120_000);

  it('retries transient failures with doubling gaps and stops after 4 attempts; a permanent refusal bounces at once', async () => {
    const org = await organization();
    relay.replyTo.set('greylisted@example.net', { code: 451, text: 'try again later' });
    relay.replyTo.set('gone@example.net', { code: 550, text: 'no such user' });
    const later = await send(org, ['greylisted@example.net']);
    const gone = await send(org, ['gone@example.net']);
    const failed = await eventually(async () => {
      const body = await email(org, later);
      return body.last_event === 'failed' && body;
    }, 60_000);
    expect(failed.attempts.map((a: { outcome: string }) => a.outcome)).toEqual(['deferred', 'deferred', 'deferred', 'deferred']);
    expect(failed.attempts[0].response).toContain('451');
    const times = failed.attempts.map((a: { at: string }) => Date.parse(a.at));
    const gaps = times.slice(1).map((t: number, i: number) => t - times[i]);
    // MAIL_RETRY_BASE_MS 300: 300, 600, 1200 ms (at least; the sender polls its queue every 200 ms).
    gaps.forEach((gap: number, i: number) => expect(gap).toBeGreaterThanOrEqual(300 * 2 ** i - 20));
    const bounced = await email(org, gone);
    expect(bounced.last_event).toBe('bounced');
    expect(bounced.attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: 'bounced', response: expect.stringContaining('550') })]);
    expect(relay.byMessageId(later)).toHaveLength(0);
  }, 120_000);

  it('two sender processes together never hand over more than 12 messages in any second, each message once', async () => {
    await stopAll();
    const orgs = await Promise.all([organization(), organization(), organization()]);
    const ids = (await Promise.all(orgs.map((org, i) => sendMany(org, 20, `rate${i}`)))).flat();
    await Promise.all([sender({ MAIL_SEND_CONCURRENCY: '4' }), sender({ MAIL_SEND_CONCURRENCY: '4' })]);
    await eventually(async () => arrived(ids).length === ids.length, 60_000);
    for (const id of ids) expect(relay.byMessageId(id)).toHaveLength(1);
    const times = ids.map((id) => relay.byMessageId(id)[0]!.receivedAt).sort((a, b) => a - b);
    // Every window of one second that starts at an arrival holds at most 12.
    const busiest = Math.max(...times.map((t, i) => times.slice(i).filter((u) => u < t + 1000).length));
    expect(busiest).toBeLessThanOrEqual(12);
    // And the senders keep close to the ceiling: 60 messages in well under 10 s.
    expect(times.at(-1)! - times[0]!).toBeLessThan(10_000);
  }, 180_000);

  it('holds each daily allowance exactly (organization cap, domain warm-up stage, platform), in order per organization', async () => {
    await stopAll();
    const today = new Date().toISOString().slice(0, 10);
    const platformUsed = await usage('platform', today);
    const capped = await organization({ daily_send_cap: 2 });
    const warming = await organization();
    const small = await organization({ daily_send_cap: 3 });
    const other = await organization();
    const sent = {
      capped: await sendMany(capped, 3, 'capped'),
      warming: await sendMany(warming, 6, 'warming'),
      small: await sendMany(small, 5, 'small'),
      other: await sendMany(other, 2, 'other'),
    };
    const all = Object.values(sent).flat();
    // A domain's first day allows 4; the platform has room for 9 more today, where the
    // organizations alone would allow 2 + 4 + 3 + 2 = 11.
    await sender({ MAIL_WARMUP_STAGES: '4,1000', PLATFORM_DAILY_SEND_CAP: String(platformUsed + 9) });
    await eventually(async () => arrived(all).length === 9, 60_000);
    // Nothing more goes out: the rest waits for the next UTC day, in order.
    await new Promise((r) => setTimeout(r, 2500));
    expect(arrived(all)).toHaveLength(9);
    expect(await usage('platform', today)).toBe(platformUsed + 9);
    const limits = { capped: 2, warming: 4, small: 3, other: 2 };
    for (const [name, ids] of Object.entries(sent)) {
      const out = arrived(ids);
      expect(out).toEqual(ids.slice(0, out.length));
      expect(out.length).toBeLessThanOrEqual(limits[name as keyof typeof limits]);
    }
    expect(await usage(`org:${capped.organizationId}`, today)).toBeLessThanOrEqual(2);
    expect(await usage(`domain:${warming.organizationId}:${warming.domain}`, today)).toBeLessThanOrEqual(4);
    const waiting = sent.capped.find((id) => arrived([id]).length === 0)!;
    expect((await email(capped, waiting)).last_event).toBe('queued');
    const { rows } = await ingress.platform.pg.query<{ wait_ms: number }>('SELECT extract(epoch FROM next_attempt_at - now()) * 1000 AS wait_ms FROM mail_deliveries WHERE message_id = $1', [waiting]);
    const now = new Date();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime();
    expect(Math.abs(rows[0]!.wait_ms - midnight)).toBeLessThan(10_000);
  }, 180_000);

  it('sends what waited for the next UTC day when the sender\'s clock turns it', async () => {
    await stopAll();
    const org = await organization({ daily_send_cap: 2 });
    // The sender's clock is moved, once it is ready, to 8 s before midnight of a day no other test
    // counts on, so its midnight is 8 s after `started` (not waited out from before its start-up).
    const clock = movableClock('2031-03-01 12:00:00');
    await sender({}, clock);
    const started = Date.now();
    clock.set('2031-03-01 23:59:52');
    const ids = await sendMany(org, 3, 'dayturn');
    await eventually(async () => arrived(ids).length === 2, 30_000);
    expect(arrived(ids)).toEqual(ids.slice(0, 2));
    for (const id of ids.slice(0, 2)) expect(relay.byMessageId(id)[0]!.receivedAt).toBeLessThan(started + 8_000);
    // The third waits for the sender's next UTC day, which comes 8 s after `started`.
    expect(arrived(ids)).toHaveLength(2);
    await eventually(async () => arrived(ids).length === 3, 30_000);
    // Not before the sender's midnight (give or take the moment its clock was set).
    expect(relay.byMessageId(ids[2]!)[0]!.receivedAt).toBeGreaterThanOrEqual(started + 8_000 - 1500);
    expect(await usage(`org:${org.organizationId}`, '2031-03-01')).toBe(2);
    expect(await usage(`org:${org.organizationId}`, '2031-03-02')).toBe(1);
  }, 150_000);

  it('a sender killed mid-send loses nothing; a message in hand at the kill may go twice with the same Message-ID, and is counted once', async () => {
    await stopAll();
    const orgs = await Promise.all([organization(), organization(), organization()]);
    const ids = (await Promise.all(orgs.map((org, i) => sendMany(org, 10, `kill${i}`)))).flat();
    const first = await sender({ MAIL_SEND_LEASE_MS: '2000', MAIL_SEND_CONCURRENCY: '4' });
    await eventually(async () => arrived(ids).length >= 8, 60_000, 20);
    first.process.kill('SIGKILL');
    await first.exited;
    senders.splice(senders.indexOf(first), 1);
    await sender({ MAIL_SEND_LEASE_MS: '2000', MAIL_SEND_CONCURRENCY: '4' });
    await eventually(async () => arrived(ids).length === ids.length, 60_000);
    const copies = ids.map((id) => relay.byMessageId(id));
    for (const c of copies) expect(c.length === 1 || c.length === 2).toBe(true);
    // At most the hand-overs one process had in hand: MAIL_SEND_CONCURRENCY.
    expect(copies.filter((c) => c.length === 2).length).toBeLessThanOrEqual(4);
    for (const c of copies) expect(new Set(c.map((m) => m.messageId)).size).toBe(1);
    const today = new Date().toISOString().slice(0, 10);
    for (const org of orgs) expect(await usage(`org:${org.organizationId}`, today)).toBe(10);
  }, 180_000);
});
