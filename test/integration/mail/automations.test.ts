// Automations and POST /events on the real stack: the resource's rules, events that
// create contacts and start runs, the daily quotas (exhaustion, nothing spent by
// unmatched events or existing contacts, 50 concurrent events at the last 10 units,
// the UTC day turning in an ingress whose clock was moved), runs taken by the
// automation worker (`workers/run.ts mail-automations`) with their delays, the
// data topics, the Resend SDK's events.send, and kill -9 of the worker mid-run:
// each step's email is stored and sent once.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, INGRESS_ENV, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually, testConfig } from '../../support/env.ts';
import { childPort, startTs, startWorkerKinds, stopChild, waitForOutput, type Child } from '../../support/processes.ts';
import { libfaketime, startMailSender, stopMailSender } from '../../support/mail/sender.ts';
import { mailKey, organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { startSmtpCapture } from '../../support/mail/smtp-capture.ts';
import { readTopic } from '../../support/topic-reader.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

let ingress: TestIngress;
let db: pg.Pool;
let worker: Child | undefined;
const config = testConfig();
/** A minute of a step's delay lasts this long in the worker of this file. */
const MINUTE_MS = '200';

const startWorker = (): Promise<Child> => startWorkerKinds(['mail-automations'], { MAIL_AUTOMATION_MINUTE_MS: MINUTE_MS });

async function stopWorker(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const w = worker;
  worker = undefined;
  await stopChild(w, signal);
}

// Its own databases: see vitest.config.ts (why this file may run side by side).
useOwnDatabases();

beforeAll(async () => {
  ingress = await startIngress({ MAIL_AUTOMATION_MINUTE_MS: MINUTE_MS });
  db = new pg.Pool({ connectionString: testConfig().DATABASE_URL, max: 4 });
  worker = await startWorker();
}, 180_000);

afterAll(async () => {
  await stopWorker();
  await db?.end();
  await ingress?.close();
});

interface Org {
  organizationId: string;
  key: string;
  keyId: string;
  from: string;
}

async function organization(): Promise<Org> {
  const org = await organizationWithKey(ingress.url, { rate_limit: 1000 });
  const domain = await verifiedDomain(ingress.url, org.key);
  await api(org, 'POST', '/api/v1/templates', { slug: 'welcome', name: 'Welcome', subject: 'Welcome {{contact.first_name | "friend"}}', html: '<p>Hi {{contact.email}}</p>', text: 'Hi' });
  await api(org, 'POST', '/api/v1/templates/welcome/publish');
  await api(org, 'POST', '/api/v1/templates', { slug: 'tips', name: 'Tips', subject: 'Tips', text: 'Tip for {{contact.email}}' });
  await api(org, 'POST', '/api/v1/templates/tips/publish');
  return { ...org, from: `Team <team@${domain.name}>` };
}

const api = (org: Pick<Org, 'key'>, method: string, path: string, body?: unknown, url = ingress.url) =>
  call(url, method, path, { key: org.key, ...(body === undefined ? {} : { body }) });

async function automation(org: Org, event: string, steps: unknown[] = [{ template: { slug: 'welcome' } }], extra: Record<string, unknown> = {}) {
  const res = await api(org, 'POST', '/api/v1/automations', { name: `On ${event}`, trigger: { event }, from: org.from, steps, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const post = (org: Org, body: unknown, url = ingress.url) => api(org, 'POST', '/events', body, url);

async function quota(org: Org, day = new Date().toISOString().slice(0, 10)) {
  const { rows } = await db.query('SELECT contacts, runs FROM mail_event_quotas WHERE organization_id = $1 AND day = $2', [org.organizationId, day]);
  return rows[0] ?? { contacts: 0, runs: 0 };
}

/** Sets the day's quota as used so far (a test at the edge of 1,000 or 5,000 starts there). */
const used = (org: Org, contacts: number, runs: number, day = new Date().toISOString().slice(0, 10)) =>
  db.query(
    'INSERT INTO mail_event_quotas (organization_id, day, contacts, runs) VALUES ($1, $2, $3, $4) ON CONFLICT (organization_id, day) DO UPDATE SET contacts = $3, runs = $4',
    [org.organizationId, day, contacts, runs],
  );

const contactCount = async (org: Org, like: string) =>
  Number((await db.query('SELECT count(*) AS n FROM mail_contacts WHERE organization_id = $1 AND email LIKE $2', [org.organizationId, like])).rows[0].n);

async function runsOf(org: Org, automationId: string) {
  const res = await api(org, 'GET', `/api/v1/automations/${automationId}/runs?limit=100`);
  expect(res.status).toBe(200);
  return res.body.data;
}

describe('automations', () => {
  it('are created with pinned published versions, listed, changed, disabled and deleted; bad ones are refused with a code', async () => {
    const org = await organization();
    const a = await automation(org, 'user.signed_up', [{ template: { slug: 'welcome' } }, { template: { slug: 'tips', version: 'latest' }, delay_minutes: 60 }], { reply_to: 'help@example.com' });
    expect(a).toMatchObject({
      object: 'automation', name: 'On user.signed_up', trigger: { event: 'user.signed_up' }, from: org.from, reply_to: 'help@example.com', enabled: true,
      steps: [{ template: { slug: 'welcome', version: 1 }, delay_minutes: 0 }, { template: { slug: 'tips', version: 1 }, delay_minutes: 60 }],
    });
    const bad = async (body: Record<string, unknown>, status: number, code: string) => {
      const res = await api(org, 'POST', '/api/v1/automations', { name: 'X', trigger: { event: 'x' }, from: org.from, steps: [{ template: { slug: 'welcome' } }], ...body });
      expect([res.status, res.body.error?.code], JSON.stringify(body)).toEqual([status, code]);
    };
    await api(org, 'POST', '/api/v1/templates', { slug: 'draft-only', name: 'Draft', subject: 'S', text: 'T' });
    await bad({ steps: [{ template: { slug: 'draft-only' } }] }, 422, 'template_version_not_published');
    await bad({ steps: [{ template: { slug: 'nope' } }] }, 422, 'template_not_found');
    await bad({ steps: [] }, 400, 'validation_failed');
    await bad({ steps: [{ template: { slug: 'welcome' }, delay_minutes: 43_201 }] }, 400, 'validation_failed');
    await bad({ from: 'team@unverified.example.org' }, 422, 'from_domain_not_verified');
    await bad({ trigger: { event: 'has space' } }, 400, 'validation_failed');
    await bad({ colour: 'red' }, 400, 'unknown_field');
    const { rows } = await db.query('SELECT count(*)::int AS n FROM mail_automations WHERE organization_id = $1', [org.organizationId]);
    expect(rows[0].n).toBe(1);

    const sendKey = await mailKey(ingress.url, org.organizationId, { kind: 'send' });
    expect((await api(sendKey, 'GET', '/api/v1/automations')).status).toBe(403);
    const list = await api(org, 'GET', '/api/v1/automations');
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([a.id]);
    const off = await api(org, 'PATCH', `/api/v1/automations/${a.id}`, { enabled: false });
    expect([off.status, off.body.enabled]).toEqual([200, false]);
    expect((await post(org, { event: 'user.signed_up', email: 'off@example.net' })).body).toMatchObject({ contact_id: null, runs_started: [] });
    expect((await api(org, 'DELETE', `/api/v1/automations/${a.id}`)).body).toEqual({ object: 'automation', id: a.id, deleted: true });
    expect((await api(org, 'GET', `/api/v1/automations/${a.id}`)).status).toBe(404);
    expect((await api(org, 'GET', '/api/v1/automations/not-a-uuid')).status).toBe(404);
  });

  it('run their steps through the worker, with the delay between them, each email once by its key, and reach the data topics', async () => {
    const org = await organization();
    const a = await automation(org, 'order.paid', [{ template: { slug: 'welcome' } }, { template: { slug: 'tips' }, delay_minutes: 5 }]);
    const posted = await post(org, { event: 'order.paid', email: 'Buyer@Example.net', properties: { order: 17 } });
    expect(posted.status).toBe(200);
    expect(posted.body).toMatchObject({ object: 'event', event: 'order.paid', contact_created: true, runs_started: [expect.any(String)] });
    const runId = posted.body.runs_started[0];
    const waiting = await eventually(async () => ((await runsOf(org, a.id))[0]?.state === 'waiting' ? (await runsOf(org, a.id))[0] : undefined), 30_000);
    expect(waiting).toMatchObject({ id: runId, step: 1, contact_id: posted.body.contact_id, event_id: posted.body.id });
    const nextAt = (await db.query<{ next_at: Date }>('SELECT next_at FROM mail_automation_runs WHERE id = $1', [runId])).rows[0]!.next_at;
    const done = await eventually(async () => ((await runsOf(org, a.id))[0]?.state === 'completed' ? (await runsOf(org, a.id))[0] : undefined), 30_000);
    expect(done.step).toBe(2);
    const { rows } = await db.query(
      "SELECT idempotency_key, subject, to_addresses, created_at FROM mail_messages WHERE organization_id = $1 AND idempotency_key LIKE 'automation:%' ORDER BY idempotency_key",
      [org.organizationId],
    );
    expect(rows.map((r) => [r.idempotency_key, r.subject, r.to_addresses])).toEqual([
      [`automation:${runId}:0`, 'Welcome friend', ['buyer@example.net']],
      [`automation:${runId}:1`, 'Tips', ['buyer@example.net']],
    ]);
    // Five "minutes" of 200 ms between the steps: the run waits until next_at, set 1 s after the first step's
    // transaction began (its message is stamped a moment later, by how long the transaction took), and the
    // second step's message is made only then.
    expect(nextAt.getTime() - rows[0].created_at.getTime()).toBeGreaterThan(500);
    expect(nextAt.getTime() - rows[0].created_at.getTime()).toBeLessThanOrEqual(1000);
    expect(rows[1].created_at.getTime()).toBeGreaterThanOrEqual(nextAt.getTime());

    const events = await readTopic<{ event_id: string; name: string; properties: string; contact_created: boolean; runs_started: number }>(
      config, 'mail.inbound-events', (m) => m.some((x) => x.value.event_id === posted.body.id),
    );
    const event = events.find((x) => x.value.event_id === posted.body.id)!;
    expect(event.key).toBe(org.organizationId);
    expect(event.value).toMatchObject({ name: 'order.paid', contact_created: true, runs_started: 1 });
    expect(JSON.parse(event.value.properties)).toEqual({ order: 17 });
    const changes = await readTopic<{ run_id: string; state: string; step: number }>(
      config, 'mail.automation-runs', (m) => m.some((x) => x.value.run_id === runId && x.value.state === 'completed'),
    );
    expect(changes.filter((x) => x.value.run_id === runId).map((x) => [x.key, x.value.state, x.value.step])).toEqual([
      [org.organizationId, 'started', 0], [org.organizationId, 'step_queued', 0], [org.organizationId, 'waiting', 1],
      [org.organizationId, 'step_queued', 1], [org.organizationId, 'completed', 2],
    ]);
  });
});

describe('runs and keys', () => {
  it('a run whose step command was lost is published again when its lease runs out', async () => {
    const org = await organization();
    const a = await automation(org, 'lost');
    await stopWorker('SIGKILL');
    try {
      const posted = await post(org, { event: 'lost', email: 'lost@example.net' });
      // As a timer that published the step and died with its command would leave it: running, leased ahead.
      await db.query("UPDATE mail_automation_runs SET state = 'running', next_at = now() + interval '2 seconds' WHERE id = $1", [posted.body.runs_started[0]]);
    } finally {
      worker = await startWorker();
    }
    const done = await eventually(async () => ((await runsOf(org, a.id))[0]?.state === 'completed' ? (await runsOf(org, a.id))[0] : undefined), 30_000);
    expect(done.step).toBe(1);
  });

  it('a domain-restricted key starts only the automations of its domains; an unsubscribed contact starts none; the service\'s key prefixes are refused on /emails', async () => {
    const org = await organization();
    const other = await verifiedDomain(ingress.url, org.key);
    await automation(org, 'joined');
    await automation(org, 'joined', [{ template: { slug: 'tips' } }], { from: `news@${other.name}` });
    const restricted = await mailKey(ingress.url, org.organizationId, { kind: 'send', domains: [other.name] });
    const started = await post({ ...org, key: restricted.key }, { event: 'joined', email: 'joiner@example.net' });
    expect(started.body.runs_started).toHaveLength(1);
    const { rows } = await db.query('SELECT a.from_domain FROM mail_automation_runs r JOIN mail_automations a ON a.id = r.automation_id WHERE r.id = $1', [started.body.runs_started[0]]);
    expect(rows[0].from_domain).toBe(other.name);

    await api(org, 'POST', '/api/v1/contacts', { email: 'gone@example.net', status: 'unsubscribed' });
    const before = await quota(org);
    const none = await post(org, { event: 'joined', email: 'gone@example.net' });
    expect(none.body).toMatchObject({ contact_created: false, runs_started: [] });
    expect(await quota(org)).toEqual(before);

    const taken = await call(ingress.url, 'POST', '/emails', { key: org.key, headers: { 'idempotency-key': `automation:${started.body.runs_started[0]}:1` }, body: { from: org.from, to: 'x@example.net', subject: 'S', text: 'T' } });
    expect([taken.status, taken.body.error.code]).toEqual([400, 'reserved_idempotency_key']);
  });
});

describe('POST /events', () => {
  it('takes SEND and FULL keys (not TEST), through the Resend SDK too, and refuses bad bodies with a code, changing nothing', async () => {
    const org = await organization();
    await automation(org, 'trial.started');
    const sendKey = await mailKey(ingress.url, org.organizationId, { kind: 'send' });
    const testKey = await mailKey(ingress.url, org.organizationId, { kind: 'test' });
    expect((await post({ ...org, key: sendKey.key }, { event: 'trial.started', email: 'send-key@example.net' })).status).toBe(200);
    // At the root, as Resend: a key of too little permission is 401 restricted_api_key (error.code insufficient_permissions).
    const byTestKey = await post({ ...org, key: testKey.key }, { event: 'trial.started', email: 'test-key@example.net' });
    expect([byTestKey.status, byTestKey.body.name, byTestKey.body.error.code]).toEqual([401, 'restricted_api_key', 'insufficient_permissions']);

    process.env.RESEND_BASE_URL = ingress.url;
    const sdk = await new Resend(sendKey.key).events.send({ event: 'trial.started', email: 'sdk@example.net', payload: { plan: 'pro' } });
    expect(sdk.error).toBeNull();
    expect(sdk.data).toMatchObject({ object: 'event', event: 'trial.started' });
    const { rows } = await db.query('SELECT properties FROM mail_inbound_events WHERE organization_id = $1 AND email = $2', [org.organizationId, 'sdk@example.net']);
    expect(rows[0].properties).toEqual({ plan: 'pro' });

    const refused = async (body: unknown, status: number, code: string) => {
      const res = await post(org, body);
      expect([res.status, res.body.error?.code], JSON.stringify(body)).toEqual([status, code]);
    };
    await refused({ event: 'trial.started' }, 400, 'invalid_contact');
    await refused({ event: 'trial.started', email: 'a@example.net', contact_id: '9d7e2c1a-0000-4000-8000-000000000000' }, 400, 'invalid_contact');
    await refused({ event: 'trial.started', email: 'not an address' }, 400, 'invalid_email');
    await refused({ event: 'trial.started', contact_id: '9d7e2c1a-0000-4000-8000-000000000000' }, 404, 'contact_not_found');
    await refused({ event: '', email: 'a@example.net' }, 400, 'validation_failed');
    await refused({ event: 'trial.started', email: 'a@example.net', extra: 1 }, 400, 'unknown_field');
    await refused({ event: 'trial.started', email: 'a@example.net', properties: { big: 'x'.repeat(17 * 1024) } }, 400, 'properties_too_large');
    expect(await contactCount(org, 'a@example.net')).toBe(0);
    expect(await quota(org)).toEqual({ contacts: 2, runs: 2 });
  });

  it('spends no quota on events that match no automation or on contacts that exist; an event over a quota is refused whole', async () => {
    const org = await organization();
    await automation(org, 'signup');
    await automation(org, 'signup', [{ template: { slug: 'tips' } }]);
    const unmatched = await post(org, { event: 'page.viewed', email: 'viewer@example.net' });
    expect(unmatched.body).toMatchObject({ contact_id: null, contact_created: false, runs_started: [] });
    expect(await contactCount(org, 'viewer@example.net')).toBe(0);
    expect(await quota(org)).toEqual({ contacts: 0, runs: 0 });

    const first = await post(org, { event: 'signup', email: 'new@example.net' });
    expect(first.body).toMatchObject({ contact_created: true, runs_started: [expect.any(String), expect.any(String)] });
    expect(await quota(org)).toEqual({ contacts: 1, runs: 2 });
    const again = await post(org, { event: 'signup', contact_id: first.body.contact_id });
    expect(again.body).toMatchObject({ contact_id: first.body.contact_id, contact_created: false });
    expect(await quota(org)).toEqual({ contacts: 1, runs: 4 });

    // The contact quota spent: a new address is refused whole (no contact, no run), a known one still starts runs.
    await used(org, 1000, 10);
    const overContacts = await post(org, { event: 'signup', email: 'one-too-many@example.net' });
    expect([overContacts.status, overContacts.body.error.code]).toEqual([429, 'contact_quota_exceeded']);
    expect(overContacts.body.error.message).toMatch(/renews at \d{4}-\d\d-\d\dT00:00:00\.000Z/);
    expect(await contactCount(org, 'one-too-many@example.net')).toBe(0);
    expect((await post(org, { event: 'signup', email: 'new@example.net' })).status).toBe(200);
    expect(await quota(org)).toEqual({ contacts: 1000, runs: 12 });

    // One run short of the run quota: an event that would start two is refused whole.
    await used(org, 0, 4999);
    const overRuns = await post(org, { event: 'signup', email: 'late@example.net' });
    expect([overRuns.status, overRuns.body.error.code]).toEqual([429, 'run_quota_exceeded']);
    expect(await contactCount(org, 'late@example.net')).toBe(0);
    expect(await quota(org)).toEqual({ contacts: 0, runs: 4999 });
    const { rows } = await db.query("SELECT count(*)::int AS n FROM mail_inbound_events WHERE organization_id = $1 AND email IN ('late@example.net', 'one-too-many@example.net')", [org.organizationId]);
    expect(rows[0].n).toBe(0);
  });

  it('admits exactly 10 of 50 simultaneous events at the last 10 units of each quota', async () => {
    const org = await organization();
    await automation(org, 'burst');
    await used(org, 990, 0);
    const contacts = await Promise.all(Array.from({ length: 50 }, (_, i) => post(org, { event: 'burst', email: `burst-${i}@example.net` })));
    expect(contacts.filter((r) => r.status === 200)).toHaveLength(10);
    expect(contacts.filter((r) => r.status === 429 && r.body.error.code === 'contact_quota_exceeded')).toHaveLength(40);
    expect(await contactCount(org, 'burst-%')).toBe(10);
    expect(await quota(org)).toEqual({ contacts: 1000, runs: 10 });

    const known = contacts.find((r) => r.status === 200)!.body.contact_id;
    await used(org, 1000, 4990);
    const runs = await Promise.all(Array.from({ length: 50 }, () => post(org, { event: 'burst', contact_id: known })));
    expect(runs.filter((r) => r.status === 200)).toHaveLength(10);
    expect(runs.filter((r) => r.status === 429 && r.body.error.code === 'run_quota_exceeded')).toHaveLength(40);
    expect(await quota(org)).toEqual({ contacts: 1000, runs: 5000 });
  });

  it('renews the quotas when the UTC day turns (an ingress whose clock is moved to just before midnight, then past it)', async () => {
    const org = await organization();
    await automation(org, 'late.night');
    // libfaketime reads the clock's offset from this file (re-read every second), so the test moves the clock.
    const clockFile = join(mkdtempSync(join(tmpdir(), 'clock-')), 'faketime');
    const setClock = (at: string) => writeFileSync(clockFile, `${(Date.parse(at) - Date.now()) / 1000 >= 0 ? '+' : ''}${Math.round((Date.parse(at) - Date.now()) / 1000)}\n`);
    setClock('2031-03-01T23:50:00Z');
    const port = childPort();
    const child = startTs('src/main.ts', [], {
      ...INGRESS_ENV, HTTP_PORT: port, LOG_LEVEL: 'info', MAIL_INBOUND_SMTP_PORT: '-1',
      // A journal of its own: with its clock years ahead, it would take every other process's journal for a stopped one.
      SCAN_JOURNAL_DIR: join(dirname(clockFile), 'scan-journal'),
      LD_PRELOAD: libfaketime(), FAKETIME_TIMESTAMP_FILE: clockFile, FAKETIME_CACHE_DURATION: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1', TZ: 'UTC',
    });
    try {
      await waitForOutput(child, 'ingress listening', 90_000);
      const url = `http://127.0.0.1:${port}`;
      await used(org, 1000, 0, '2031-03-01');
      const before = await post(org, { event: 'late.night', email: 'before-midnight@example.net' }, url);
      expect([before.status, before.body.error?.code]).toEqual([429, 'contact_quota_exceeded']);
      expect(before.body.error.message).toContain('2031-03-02T00:00:00.000Z');
      setClock('2031-03-02T00:00:05Z');
      const after = await eventually(async () => {
        const res = await post(org, { event: 'late.night', email: 'after-midnight@example.net' }, url);
        return res.status === 200 ? res : undefined;
      }, 15_000, 500);
      expect(after!.body.contact_created).toBe(true);
      expect(await quota(org, '2031-03-02')).toEqual({ contacts: 1, runs: 1 });
      expect(await quota(org, '2031-03-01')).toEqual({ contacts: 1000, runs: 0 });
    } finally {
      child.process.kill('SIGTERM');
      await child.exited;
    }
  });
});

describe('the automation worker killed mid-run', () => {
  it('takes every step once: one stored message per run and step, and one email each at the relay', async () => {
    const org = await organization();
    const steps = 3;
    const a = await automation(org, 'crash', Array.from({ length: steps }, () => ({ template: { slug: 'tips' } })));
    // 120 runs of 3 steps: 360 messages, the three kills among them (exactly-once does not depend on how many).
    const total = 120;
    for (let i = 0; i < total; i += 40) {
      const batch = await Promise.all(Array.from({ length: 40 }, (_, j) => post(org, { event: 'crash', email: `crash-${i + j}@example.net` })));
      expect(batch.every((r) => r.status === 200)).toBe(true);
    }
    const stored = async () => Number((await db.query(
      "SELECT count(*) AS n FROM mail_messages WHERE organization_id = $1 AND idempotency_key LIKE 'automation:%'", [org.organizationId],
    )).rows[0].n);
    for (const at of [30, 140, 250]) {
      await eventually(async () => (await stored()) >= at, 90_000, 20);
      await new Promise((r) => setTimeout(r, Math.random() * 200));
      await stopWorker('SIGKILL');
      worker = await startWorker();
    }
    await eventually(async () => Number((await db.query("SELECT count(*) AS n FROM mail_automation_runs WHERE automation_id = $1 AND state = 'completed'", [a.id])).rows[0].n) === total, 120_000);
    const { rows } = await db.query(
      `SELECT count(*)::int AS messages, count(DISTINCT idempotency_key)::int AS keys, count(DISTINCT to_addresses[1])::int AS addresses
         FROM mail_messages WHERE organization_id = $1 AND idempotency_key LIKE 'automation:%'`,
      [org.organizationId],
    );
    expect(rows[0]).toEqual({ messages: total * steps, keys: total * steps, addresses: total });

    const relay = await startSmtpCapture();
    const sender = await startMailSender({ SMTP_URL: relay.url, MAIL_SEND_RATE_PER_SEC: '5000', MAIL_SEND_CONCURRENCY: '8', MAIL_WARMUP_STAGES: '100000000', PLATFORM_DAILY_SEND_CAP: '100000000' });
    try {
      const mine = () => relay.messages.filter((m) => /^crash-\d+@example\.net$/.test(m.to[0] ?? ''));
      await eventually(async () => mine().length >= total * steps, 180_000, 500);
      await new Promise((r) => setTimeout(r, 2000)); // a message sent twice would arrive meanwhile
      const perAddress = new Map<string, number>();
      for (const m of mine()) perAddress.set(m.to[0]!, (perAddress.get(m.to[0]!) ?? 0) + 1);
      expect(perAddress.size).toBe(total);
      expect([...perAddress.values()].filter((n) => n !== steps)).toEqual([]);
    } finally {
      await stopMailSender(sender);
      await relay.close();
    }
  }, 600_000);
});
