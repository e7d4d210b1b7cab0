// Broadcasts on the real stack: the API (create rules, transitions and codes) in
// an ingress of this file, and the broadcast worker (`workers/run.ts
// mail-broadcasts`) as a child process: eligibility, fan-out, A/B tests with a
// decision, cancel, resends to non-openers, the report, scheduled jobs across a
// restart, and kill -9 during a fan-out of 800 contacts, whose messages a mail
// sender then hands to a relay of this file, one per contact. The worker fans out in
// batches of BATCH (MAIL_FANOUT_BATCH, 500 by default): 800 contacts cross 40 batches,
// as many as 20,000 would at 500, so the kills fall among as many batch transactions.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually, testConfig } from '../../support/env.ts';
import { startWorkerKinds, stopChild, type Child } from '../../support/processes.ts';
import { mailKey, organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { broadcastHelpers, type Org } from '../../support/mail/broadcasts.ts';
import { startMailSender, stopMailSender } from '../../support/mail/sender.ts';
import { startSmtpCapture } from '../../support/mail/smtp-capture.ts';
import { linkToken } from '../../../src/mail/tracking/tracking-links.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

let ingress: TestIngress;
let db: pg.Pool;
let worker: Child | undefined;
const config = testConfig();
/** Contacts per fan-out batch in this file's worker. */
const BATCH = 20;

const startWorker = (env: Record<string, string> = {}): Promise<Child> =>
  startWorkerKinds(['mail-broadcasts'], { MAIL_RESEND_WAIT_HOURS: '0', MAIL_FANOUT_BATCH: String(BATCH), ...env });

async function stopWorker(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const w = worker;
  worker = undefined;
  await stopChild(w, signal);
}

// Its own databases: see vitest.config.ts (why this file may run side by side).
useOwnDatabases();

beforeAll(async () => {
  ingress = await startIngress({ MAIL_RESEND_WAIT_HOURS: '0' });
  db = new pg.Pool({ connectionString: testConfig().DATABASE_URL, max: 2 });
  worker = await startWorker();
}, 180_000);

afterAll(async () => {
  await stopWorker();
  await db?.end();
  await ingress?.close();
});

const { api, organization, contacts, broadcastBody, create, get, until } = broadcastHelpers(() => ingress.url);

async function recipients(broadcastId: string) {
  const { rows } = await db.query(
    `SELECT r.contact_id, r.state, r.variant, r.message_id, m.subject, m.html, m.kind, m.reply_to, m.to_addresses
       FROM mail_broadcast_recipients r LEFT JOIN mail_messages m ON m.id = r.message_id WHERE r.broadcast_id = $1`,
    [broadcastId],
  );
  return rows;
}

describe('creating a broadcast', () => {
  it('makes a draft, or a scheduled broadcast with scheduled_at, with every field of the broadcast object', async () => {
    const org = await organization();
    const draft = await create(org, { reply_to: 'help@example.org', preview_text: 'Fresh news' });
    expect(draft).toMatchObject({
      object: 'broadcast', name: 'Spring', status: 'draft', from: org.from, domain: org.domain, topic: 'news', segment_id: null, template: null,
      subject: 'Hello {{contact.first_name}}', subject_b: null, ab_test: null, ab_winner: null, ab_decided_at: null, parent_id: null,
      reply_to: 'help@example.org', preview_text: 'Fresh news', scheduled_at: null, started_at: null, finished_at: null, stats: null,
    });
    expect(draft.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const later = new Date(Date.now() + 3_600_000).toISOString().replace('Z', '+00:00');
    const scheduled = await create(org, { scheduled_at: later });
    expect(scheduled.status).toBe('scheduled');
    expect(Date.parse(scheduled.scheduled_at)).toBe(Date.parse(later));
    const list = await api(org, 'GET', '/api/v1/broadcasts');
    expect(list.body.object).toBe('list');
    expect(list.body.data.map((b: { id: string }) => b.id)).toEqual([scheduled.id, draft.id]);
  });

  it('refuses each broken rule with a 4xx and its code, and stores nothing', async () => {
    const org = await organization();
    const other = await organizationWithKey(ingress.url, { rate_limit: 1000 });
    const { rows: segments } = await db.query('SELECT gen_random_uuid() AS id');
    const foreignSegment = await api(other, 'POST', '/api/v1/segments', { name: 'x', filter: { field: 'email', op: 'contains', value: 'a' } });
    const cases: [Record<string, unknown>, number, string][] = [
      [{ name: 'x'.repeat(121) }, 400, 'validation_failed'],
      [{ from: 'not an address' }, 400, 'invalid_from'],
      [{ from: 'news@unverified.example.com' }, 422, 'from_domain_not_verified'],
      [{ topic: 'nope' }, 422, 'topic_not_found'],
      [{ segment_id: segments[0].id }, 422, 'segment_not_found'],
      [{ segment_id: foreignSegment.body.id }, 422, 'segment_not_found'],
      [{ template: { slug: 'welcome' } }, 422, 'template_with_content'],
      [{ subject: undefined }, 400, 'missing_subject'],
      [{ html: undefined, text: undefined }, 400, 'missing_content'],
      [{ subject: 'two\nlines' }, 400, 'validation_failed'],
      [{ subject: 'x'.repeat(999) }, 400, 'validation_failed'],
      [{ html: 'x'.repeat(2 * 1024 * 1024 + 1) }, 400, 'content_too_large'],
      [{ ab_test: { percent: 20, wait_minutes: 60, metric: 'opens' } }, 422, 'subject_b_required'],
      [{ subject_b: 'B', ab_test: { percent: 9, wait_minutes: 60, metric: 'opens' } }, 400, 'validation_failed'],
      [{ subject_b: 'B', ab_test: { percent: 51, wait_minutes: 60, metric: 'opens' } }, 400, 'validation_failed'],
      [{ subject_b: 'B', ab_test: { percent: 20, wait_minutes: 29, metric: 'opens' } }, 400, 'validation_failed'],
      [{ subject_b: 'B', ab_test: { percent: 20, wait_minutes: 4321, metric: 'opens' } }, 400, 'validation_failed'],
      [{ subject_b: 'B', ab_test: { percent: 20, wait_minutes: 60, metric: 'replies' } }, 400, 'validation_failed'],
      [{ preview_text: 'x'.repeat(257) }, 400, 'validation_failed'],
      [{ preview_text: '' }, 400, 'validation_failed'],
      [{ scheduled_at: '2030-01-01T10:00:00' }, 400, 'validation_failed'],
      [{ reply_to: 'nope' }, 400, 'invalid_reply_to'],
      [{ colour: 'blue' }, 400, 'unknown_field'],
    ];
    for (const [change, status, code] of cases) {
      const body: Record<string, unknown> = broadcastBody(org, change);
      for (const [k, v] of Object.entries(change)) if (v === undefined) delete body[k];
      const res = await api(org, 'POST', '/api/v1/broadcasts', body);
      expect([JSON.stringify(change).slice(0, 80), res.status, res.body.error?.code ?? res.body.name]).toEqual([JSON.stringify(change).slice(0, 80), status, code]);
    }
    expect((await api(org, 'GET', '/api/v1/broadcasts')).body.data).toEqual([]);
  });

  it('takes a published template version, and refuses a draft one', async () => {
    const org = await organization();
    await api(org, 'POST', '/api/v1/templates', { slug: 'welcome', name: 'Welcome', subject: 'Welcome {{contact.first_name}}', html: '<p>Hi</p>' });
    const unpublished = await api(org, 'POST', '/api/v1/broadcasts', { name: 'T', from: org.from, topic: 'news', template: { slug: 'welcome' } });
    expect([unpublished.status, unpublished.body.error.code]).toEqual([422, 'template_version_not_published']);
    await api(org, 'POST', '/api/v1/templates/welcome/publish');
    const made = await api(org, 'POST', '/api/v1/broadcasts', { name: 'T', from: org.from, topic: 'news', template: { slug: 'welcome', version: 'latest' } });
    expect(made.status).toBe(201);
    expect(made.body.template).toMatchObject({ slug: 'welcome', version: 1 });
    expect(made.body.subject).toBe('Welcome {{contact.first_name}}');
  });
});

describe('transitions', () => {
  it('answers each refused transition with 409 and its code, and a domain-restricted key sees only its domains', async () => {
    const org = await organization();
    const draft = await create(org);
    expect((await api(org, 'POST', `/api/v1/broadcasts/${draft.id}/decide`)).body.error.code).toBe('not_testing');
    expect((await api(org, 'POST', `/api/v1/broadcasts/${draft.id}/resend`, {})).body.error.code).toBe('not_resendable');
    const canceled = await api(org, 'POST', `/api/v1/broadcasts/${draft.id}/cancel`);
    expect([canceled.status, canceled.body.status]).toEqual([200, 'canceled']);
    const again = await api(org, 'POST', `/api/v1/broadcasts/${draft.id}/cancel`);
    expect([again.status, again.body.error.code]).toEqual([409, 'not_cancelable']);
    const send = await api(org, 'POST', `/api/v1/broadcasts/${draft.id}/send`);
    expect([send.status, send.body.error.code]).toEqual([409, 'not_schedulable']);

    const other = await verifiedDomain(ingress.url, org.key);
    const restricted = await mailKey(ingress.url, org.organizationId, { kind: 'send', domains: [other.name] });
    expect((await api(restricted, 'GET', `/api/v1/broadcasts/${draft.id}`)).status).toBe(404);
    expect((await api(restricted, 'GET', `/api/v1/broadcasts/${draft.id}/report`)).status).toBe(404);
    expect((await api(restricted, 'GET', '/api/v1/broadcasts')).body.data).toEqual([]);
    const refused = await api(restricted, 'POST', '/api/v1/broadcasts', broadcastBody(org));
    expect([refused.status, refused.body.error.code]).toEqual([403, 'domain_not_allowed']);
    const test = await mailKey(ingress.url, org.organizationId, { kind: 'test' });
    expect((await api(test, 'GET', `/api/v1/broadcasts/${draft.id}`)).status).toBe(403);
    expect((await api(test, 'GET', `/api/v1/broadcasts/${draft.id}/report`)).status).toBe(200);
    expect((await api(org, 'GET', '/api/v1/broadcasts/not-a-uuid')).status).toBe(404);
  });

  it('reschedules with a new time, and a scheduled broadcast starts when its time comes, across a worker restart', async () => {
    const org = await organization();
    await contacts(org, 3, 'sched');
    const b = await create(org, { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() });
    const soon = new Date(Date.now() + 4000).toISOString();
    const moved = await api(org, 'POST', `/api/v1/broadcasts/${b.id}/send`, { scheduled_at: soon });
    expect([moved.status, moved.body.status, Date.parse(moved.body.scheduled_at)]).toEqual([200, 'scheduled', Date.parse(soon)]);
    const { rows: jobs } = await db.query('SELECT run_at FROM mail_broadcast_jobs WHERE broadcast_id = $1', [b.id]);
    expect(jobs.map((j) => j.run_at.getTime())).toEqual([Date.parse(soon)]);
    // Every process of the worker gone while the job waits; the restarted worker runs it, once.
    await stopWorker('SIGKILL');
    worker = await startWorker();
    const sent = await until(org, b.id, 'sent');
    expect(sent.stats).toMatchObject({ eligible: 3, suppressed: 0, queued: 3, skipped: 0 });
    expect(await recipients(b.id)).toHaveLength(3);
  });
});

describe('the fan-out', () => {
  it('sends to the eligible contacts only, one message each, with the preview block, reply-to and the topic\'s kind', async () => {
    const org = await organization();
    await api(org, 'POST', '/api/v1/topics', { slug: 'offers', name: 'Offers', default_subscription: 'opt_out' });
    await contacts(org, 6, 'elig', (i) => ({ plan: i === 5 ? 'free' : 'pro' }));
    const byEmail = async (email: string) => (await db.query('SELECT id FROM mail_contacts WHERE organization_id = $1 AND email = $2', [org.organizationId, email])).rows[0].id;
    // elig-1 unsubscribed; elig-2 unsubscribed from the topic; elig-3 suppressed; elig-5 outside the segment.
    await api(org, 'PATCH', `/api/v1/contacts/${await byEmail('elig-1@example.net')}`, { status: 'unsubscribed' });
    await api(org, 'PUT', `/api/v1/contacts/${await byEmail('elig-2@example.net')}/topics/news`, { subscribed: false });
    await api(org, 'POST', '/api/v1/suppressions', { email: 'elig-3@example.net' });
    const segment = await api(org, 'POST', '/api/v1/segments', { name: 'Pro', filter: { field: 'properties.plan', op: 'eq', value: 'pro' } });
    const b = await create(org, { segment_id: segment.body.id, reply_to: 'help@example.org', preview_text: 'Fresh <news>' });
    const started = await api(org, 'POST', `/api/v1/broadcasts/${b.id}/send`);
    expect(started.status).toBe(200);
    const sent = await until(org, b.id, 'sent');
    expect(sent.stats).toEqual({ eligible: 2, suppressed: 1, queued: 2, skipped: 0 });
    expect(sent.started_at).not.toBeNull();
    expect(sent.finished_at).not.toBeNull();
    const rows = await recipients(b.id);
    expect(rows.map((r) => r.to_addresses[0]).sort()).toEqual(['elig-0@example.net', 'elig-4@example.net']);
    const first = rows.find((r) => r.to_addresses[0] === 'elig-0@example.net')!;
    expect(first).toMatchObject({ state: 'queued', kind: 'broadcast.news', subject: 'Hello P0', reply_to: ['help@example.org'] });
    expect(first.html).toMatch(/^<html><body><div style="display:none[^"]*">Fresh &lt;news&gt;<\/div><p>Hi P0<\/p>/);

    // An opt-out topic includes nobody without an explicit choice: the worker ends it and says why.
    const nobody = await create(org, { topic: 'offers' });
    await api(org, 'POST', `/api/v1/broadcasts/${nobody.id}/send`, {});
    const ended = await until(org, nobody.id, 'sent');
    expect(ended.stats.reason).toMatch(/Nobody is eligible/);
  });

  it('stops a canceled broadcast at its next batch; what was queued stays queued', async () => {
    const org = await organization();
    // 50 batches (25,000 contacts at 500), so the cancel lands well before the last.
    await contacts(org, 50 * BATCH, 'cancel');
    const b = await create(org);
    await api(org, 'POST', `/api/v1/broadcasts/${b.id}/send`);
    await eventually(async () => (await recipients(b.id)).length > 0, 30_000, 20);
    const canceled = await api(org, 'POST', `/api/v1/broadcasts/${b.id}/cancel`);
    expect(canceled.body.status).toBe('canceled');
    await new Promise((r) => setTimeout(r, 2000));
    const rows = await recipients(b.id);
    expect(rows.length % BATCH).toBe(0);
    expect(rows.length).toBeLessThan(50 * BATCH);
    expect((await get(org, b.id)).status).toBe('canceled');
    expect((await get(org, b.id)).stats.queued).toBe(rows.length);
  });
});

describe('A/B tests', () => {
  it('without ab_test, subject B goes to about half by contact id and there is no winner', async () => {
    const org = await organization();
    await contacts(org, 200, 'split');
    const b = await create(org, { subject: 'A subject', subject_b: 'B subject' });
    await api(org, 'POST', `/api/v1/broadcasts/${b.id}/send`);
    const sent = await until(org, b.id, 'sent');
    expect(sent.ab_winner).toBeNull();
    const rows = await recipients(b.id);
    const bs = rows.filter((r) => r.variant === 'B');
    expect(bs.every((r) => r.subject === 'B subject')).toBe(true);
    expect(rows.filter((r) => r.variant === 'A').every((r) => r.subject === 'A subject')).toBe(true);
    expect(bs.length).toBeGreaterThan(60);
    expect(bs.length).toBeLessThan(140);
  });

  it('sends the test share first, waits for the decision, then sends the rest with the winning subject', async () => {
    const org = await organization();
    await contacts(org, 400, 'ab');
    const b = await create(org, { subject: 'Subject A', subject_b: 'Subject B', ab_test: { percent: 20, wait_minutes: 30, metric: 'opens' } });
    await api(org, 'POST', `/api/v1/broadcasts/${b.id}/send`);
    const testing = await until(org, b.id, 'testing');
    const share = testing.stats.testShare;
    expect(share).toBeGreaterThan(40);
    expect(share).toBeLessThan(125);
    expect(testing.stats.queued).toBe(400);
    const rows = await recipients(b.id);
    expect(rows.filter((r) => r.state === 'queued')).toHaveLength(share);
    expect(rows.filter((r) => r.state === 'waiting')).toHaveLength(400 - share);
    const { rows: decideJob } = await db.query("SELECT run_at FROM mail_broadcast_jobs WHERE broadcast_id = $1 AND command = 'decide'", [b.id]);
    expect(decideJob[0].run_at.getTime() - Date.now()).toBeGreaterThan(29 * 60_000);

    // B's messages delivered and opened, A's only delivered: B wins on opens.
    const test = rows.filter((r) => r.state === 'queued');
    for (const r of test) await db.query("INSERT INTO mail_events (organization_id, message_id, type, once_key) VALUES ($1, $2, 'delivered', $3)", [org.organizationId, r.message_id, `delivered:${r.message_id}`]);
    for (const r of test.filter((x) => x.variant === 'B')) {
      const open = await fetch(`${ingress.url}/m/o/${linkToken(config.MAIL_LINK_SECRET, 'o', { m: r.message_id })}`);
      expect(open.status).toBe(200);
    }
    const decided = await api(org, 'POST', `/api/v1/broadcasts/${b.id}/decide`);
    expect([decided.status, decided.body.status]).toEqual([200, 'testing']);
    const sent = await until(org, b.id, 'sent');
    expect(sent.ab_winner).toBe('B');
    expect(sent.ab_decided_at).not.toBeNull();
    const after = await recipients(b.id);
    expect(after.filter((r) => r.state === 'queued')).toHaveLength(400);
    expect(after.filter((r) => r.variant === null).every((r) => r.subject === 'Subject B')).toBe(true);
    const { rows: left } = await db.query('SELECT 1 FROM mail_broadcast_jobs WHERE broadcast_id = $1', [b.id]);
    expect(left).toEqual([]);

    const report = (await api(org, 'GET', `/api/v1/broadcasts/${b.id}/report`)).body;
    const bCount = test.filter((r) => r.variant === 'B').length;
    expect(report).toMatchObject({ object: 'broadcast_report', broadcast_id: b.id, status: 'sent', tracking_enabled: true, winner: 'B' });
    expect(report.totals).toEqual({ recipients: 400, skipped: 0, queued: 400 - share, sent: share, delivered: share, bounced: 0, complained: 0, opened: bCount, clicked: 0, unsubscribed: 0 });
    expect(report.rates).toEqual({ open: Number((bCount / share).toFixed(4)), click: 0, bounce: 0, unsubscribe: 0 });
    expect(report.variants.map((v: { variant: string; opened: number; open_rate: number }) => [v.variant, v.opened, v.open_rate])).toEqual([['A', 0, 0], ['B', bCount, 1]]);
  });

  it('decides by itself when the wait is over, and a cancel in testing removes the pending decision', async () => {
    // A minute of the wait lasts 100 ms in this worker: wait_minutes 30 is 3 s.
    await stopWorker();
    worker = await startWorker({ MAIL_AB_MINUTE_MS: '100' });
    try {
      const org = await organization();
      await contacts(org, 50, 'wait');
      const ab = { subject: 'Subject A', subject_b: 'Subject B', ab_test: { percent: 50, wait_minutes: 30, metric: 'clicks' } };
      const [waits, canceled] = [await create(org, ab), await create(org, ab)];
      await api(org, 'POST', `/api/v1/broadcasts/${waits.id}/send`);
      await api(org, 'POST', `/api/v1/broadcasts/${canceled.id}/send`);
      await until(org, canceled.id, 'testing');
      expect((await api(org, 'POST', `/api/v1/broadcasts/${canceled.id}/cancel`)).body.status).toBe('canceled');
      const { rows: jobs } = await db.query('SELECT 1 FROM mail_broadcast_jobs WHERE broadcast_id = $1', [canceled.id]);
      expect(jobs).toEqual([]);
      // No clicks: a tie, which goes to A.
      const sent = await until(org, waits.id, 'sent', 30_000);
      expect(sent.ab_winner).toBe('A');
      expect(Date.parse(sent.ab_decided_at) - Date.parse(sent.started_at)).toBeGreaterThanOrEqual(3000);
      expect((await recipients(waits.id)).filter((r) => r.state === 'queued')).toHaveLength(50);
      await new Promise((r) => setTimeout(r, 4000));
      const after = await get(org, canceled.id);
      expect([after.status, after.ab_winner]).toEqual(['canceled', null]);
      expect((await recipients(canceled.id)).filter((r) => r.state === 'waiting').length).toBe(50 - after.stats.testShare);
    } finally {
      await stopWorker();
      worker = await startWorker();
    }
  }, 120_000);
});

describe('resends', () => {
  it('go to the parent\'s non-openers at fan-out time, by the resend rules', async () => {
    const org = await organization();
    await contacts(org, 10, 'resend');
    const parent = await create(org);
    await api(org, 'POST', `/api/v1/broadcasts/${parent.id}/send`);
    await until(org, parent.id, 'sent');
    const early = await api(org, 'POST', `/api/v1/broadcasts/${parent.id}/resend`, { subject: 'Did you see?' });
    expect(early.status).toBe(201);
    expect(early.body).toMatchObject({ parent_id: parent.id, status: 'draft', subject: 'Did you see?', subject_b: null, topic: 'news' });
    const exists = await api(org, 'POST', `/api/v1/broadcasts/${parent.id}/resend`, {});
    expect([exists.status, exists.body.error.code]).toEqual([409, 'resend_exists']);
    expect((await api(org, 'POST', `/api/v1/broadcasts/${early.body.id}/resend`, {})).status).toBe(409);
    // Opens after the child was made still count: the audience is worked out when it fans out.
    const rows = await recipients(parent.id);
    for (const r of rows.slice(0, 4)) await fetch(`${ingress.url}/m/o/${linkToken(config.MAIL_LINK_SECRET, 'o', { m: r.message_id })}`);
    // A privacy proxy's fetch (Apple Mail's, on arrival) is no open: that contact stays a non-opener.
    await fetch(`${ingress.url}/m/o/${linkToken(config.MAIL_LINK_SECRET, 'o', { m: rows[4].message_id })}`, { headers: { 'user-agent': 'Mozilla/5.0' } });
    // Twice: a click counts as an open (already counted for this message); the repeat within the period is not recorded, so top links count one.
    for (let i = 0; i < 2; i++) await fetch(`${ingress.url}/m/c/${linkToken(config.MAIL_LINK_SECRET, 'c', { m: rows[0].message_id, u: 'https://example.com/spring' })}`, { redirect: 'manual' });
    const report = (await api(org, 'GET', `/api/v1/broadcasts/${parent.id}/report`)).body;
    expect(report.totals).toEqual({ recipients: 10, skipped: 0, queued: 10, sent: 0, delivered: 0, bounced: 0, complained: 0, opened: 4, clicked: 1, unsubscribed: 0 });
    expect(report.rates).toEqual({ open: null, click: null, bounce: null, unsubscribe: null });
    expect([report.variants, report.winner, report.top_links]).toEqual([null, null, [{ url: 'https://example.com/spring', clicks: 1 }]]);
    await api(org, 'POST', `/api/v1/broadcasts/${early.body.id}/send`);
    const child = await until(org, early.body.id, 'sent');
    expect(child.stats.eligible).toBe(6);
    const childRows = await recipients(early.body.id);
    expect(childRows.map((r) => r.contact_id).sort()).toEqual(rows.slice(4).map((r) => r.contact_id).sort());
    expect(childRows.every((r) => r.subject === 'Did you see?')).toBe(true);
  });
  it('refuse a send time under the configured wait after the parent finished, naming the earliest time, and a new subject on a template broadcast', async () => {
    const org = await organization();
    await contacts(org, 2, 'wait');
    await api(org, 'POST', '/api/v1/templates', { slug: 'digest', name: 'Digest', subject: 'Digest', html: '<p>Hi</p>' });
    await api(org, 'POST', '/api/v1/templates/digest/publish');
    const parent = (await api(org, 'POST', '/api/v1/broadcasts', { name: 'T', from: org.from, topic: 'news', template: { slug: 'digest' } })).body;
    await api(org, 'POST', `/api/v1/broadcasts/${parent.id}/send`);
    const sent = await until(org, parent.id, 'sent');
    const earliest = new Date(Date.parse(sent.finished_at) + 24 * 3_600_000).toISOString();
    // The default wait of 24 hours, in an ingress of its own (this file's runs with the wait off).
    const waiting = await startIngress({});
    try {
      const at = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();
      const viaWaiting = (path: string, body: unknown) => call(waiting.url, 'POST', path, { key: org.key, body });
      const subject = await viaWaiting(`/api/v1/broadcasts/${parent.id}/resend`, { subject: 'Again' });
      expect([subject.status, subject.body.error.code]).toEqual([422, 'subject_from_template']);
      const tooEarly = await viaWaiting(`/api/v1/broadcasts/${parent.id}/resend`, { scheduled_at: at(1) });
      expect([tooEarly.status, tooEarly.body.error.code]).toEqual([409, 'resend_too_early']);
      expect(tooEarly.body.error.message).toContain(earliest);
      const { rows: children } = await db.query('SELECT 1 FROM mail_broadcasts WHERE parent_id = $1', [parent.id]);
      expect(children).toHaveLength(0);
      // A draft child is made; sending it now, or scheduling it too early, is refused; after the wait it is scheduled.
      const draft = await viaWaiting(`/api/v1/broadcasts/${parent.id}/resend`, {});
      expect([draft.status, draft.body.status, draft.body.subject]).toEqual([201, 'draft', 'Digest']);
      const now = await viaWaiting(`/api/v1/broadcasts/${draft.body.id}/send`, {});
      expect([now.status, now.body.error.code]).toEqual([409, 'resend_too_early']);
      const soon = await viaWaiting(`/api/v1/broadcasts/${draft.body.id}/send`, { scheduled_at: at(23) });
      expect([soon.status, soon.body.error.code]).toEqual([409, 'resend_too_early']);
      expect((await get(org, draft.body.id)).status).toBe('draft');
      const later = await viaWaiting(`/api/v1/broadcasts/${draft.body.id}/send`, { scheduled_at: at(25) });
      expect([later.status, later.body.status]).toEqual([200, 'scheduled']);
    } finally {
      await waiting.close();
    }
  });
});

describe('a worker killed during a fan-out', () => {
  it('leaves, after it finishes, exactly one recipient row and one queued message per eligible contact, and one message each at the relay', async () => {
    const org = await organization({ daily_send_cap: 0 });
    // 40 batches, as 20,000 contacts at the default 500; exactly-once per contact does not depend on
    // how many contacts a batch holds, only on batches committed whole and the cursor after a kill.
    const total = 40 * BATCH;
    for (let i = 0; i < 4; i++) await contacts(org, total / 4, `crash${i}`);
    const b = await create(org);
    await api(org, 'POST', `/api/v1/broadcasts/${b.id}/send`);
    const count = async () => Number((await db.query('SELECT count(*) AS n FROM mail_broadcast_recipients WHERE broadcast_id = $1', [b.id])).rows[0].n);
    // At 7.5%, 20% and 45% of the audience, a moment into a batch's transaction.
    for (const at of [3 * BATCH, 8 * BATCH, 18 * BATCH]) {
      await eventually(async () => (await count()) >= at, 90_000, 10);
      await new Promise((r) => setTimeout(r, Math.random() * 60));
      await stopWorker('SIGKILL');
      // Killed mid-fan-out: the broadcast is still sending.
      expect((await get(org, b.id)).status).toBe('sending');
      worker = await startWorker();
    }
    const sent = await until(org, b.id, 'sent', 120_000);
    const { rows } = await db.query(
      `SELECT (SELECT count(*) FROM mail_broadcast_recipients WHERE broadcast_id = $1)::int AS recipients,
              (SELECT count(DISTINCT contact_id) FROM mail_broadcast_recipients WHERE broadcast_id = $1)::int AS contacts,
              (SELECT count(*) FROM mail_messages WHERE organization_id = $2 AND idempotency_key LIKE 'broadcast:' || $1 || ':%')::int AS messages,
              (SELECT count(DISTINCT to_addresses[1]) FROM mail_messages WHERE organization_id = $2 AND idempotency_key LIKE 'broadcast:' || $1 || ':%')::int AS addresses,
              (SELECT count(*) FROM mail_broadcast_recipients r JOIN mail_messages m ON m.id = r.message_id WHERE r.broadcast_id = $1)::int AS joined`,
      [b.id, org.organizationId],
    );
    expect(rows[0]).toEqual({ recipients: total, contacts: total, messages: total, addresses: total, joined: total });
    expect(sent.stats).toEqual({ eligible: total, suppressed: 0, queued: total, skipped: 0 });
    // Every message leaves the outbox (published by the worker, or by the ingress's relay after a kill).
    await eventually(async () => Number((await db.query(
      'SELECT count(*) AS n FROM mail_message_outbox o JOIN mail_broadcast_recipients r ON r.message_id = o.message_id WHERE r.broadcast_id = $1', [b.id],
    )).rows[0].n) === 0, 60_000);

    // Sent, with the platform rate raised for the test (12/s stays the default): one message per contact at the relay.
    const relay = await startSmtpCapture();
    const sender = await startMailSender({
      SMTP_URL: relay.url, MAIL_SEND_RATE_PER_SEC: '5000', MAIL_SEND_CONCURRENCY: '8', MAIL_WARMUP_STAGES: '100000000', PLATFORM_DAILY_SEND_CAP: '100000000',
    });
    try {
      const mine = () => relay.messages.filter((m) => /^crash\d-\d+@example\.net$/.test(m.to[0] ?? ''));
      // About 100 to 200 a second from one sender on this machine, slower while other work runs.
      await eventually(async () => mine().length >= total, 120_000, 200);
      await new Promise((r) => setTimeout(r, 2000)); // a message sent twice would arrive meanwhile
      const perAddress = new Map<string, number>();
      for (const m of mine()) perAddress.set(m.to[0]!, (perAddress.get(m.to[0]!) ?? 0) + 1);
      expect(perAddress.size).toBe(total);
      expect([...perAddress.values()].filter((n) => n !== 1)).toEqual([]);
    } finally {
      await stopMailSender(sender);
      await relay.close();
    }
  }, 400_000);
});
