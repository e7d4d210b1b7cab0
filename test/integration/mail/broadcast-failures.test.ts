// Broadcasts under careless and hostile input (issue 28), on the real stack: an
// ingress of this file and the broadcast worker (`workers/run.ts mail-broadcasts`)
// as a child process. A segment filter that Postgres would refuse is refused when
// it is made; a fan-out that fails for good (a bad segment stored earlier, an error
// Postgres raises on every try, content nobody's message can be made from) ends
// `canceled` with `stats.reason`, while a passing outage is retried; the largest
// content reaches every contact; the rest of an A/B test goes only to contacts still
// eligible, and a contact deleted meanwhile is counted; the list has a cursor.
// Faults are raised by Postgres itself, from a trigger scoped to one broadcast id.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIngress, type TestIngress } from '../../support/ingress.ts';
import { testConfig } from '../../support/env.ts';
import { startWorkerKinds, stopChild, type Child } from '../../support/processes.ts';
import { broadcastHelpers, type Org } from '../../support/mail/broadcasts.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

let ingress: TestIngress;
let db: pg.Pool;
let worker: Child | undefined;
const { api, organization, contacts, create, get, until } = broadcastHelpers(() => ingress.url);

// Its own databases: see vitest.config.ts (why this file may run side by side).
useOwnDatabases();

beforeAll(async () => {
  ingress = await startIngress();
  db = new pg.Pool({ connectionString: testConfig().DATABASE_URL, max: 2 });
  // 8 MB batches: 40 messages of 2 MB cross eight of them (production's 64 MB would take 400).
  worker = await startWorkerKinds(['mail-broadcasts'], { MAIL_FANOUT_BATCH_BYTES: String(BATCH_BYTES) });
}, 180_000);

afterAll(async () => {
  await stopChild(worker);
  await db?.end();
  await ingress?.close();
});

const BATCH_BYTES = 8 * 1024 * 1024;

const send = (org: Org, id: string) => api(org, 'POST', `/api/v1/broadcasts/${id}/send`);

async function recipientStates(broadcastId: string): Promise<Record<string, number>> {
  const { rows } = await db.query<{ state: string; n: number }>('SELECT state, count(*)::int AS n FROM mail_broadcast_recipients WHERE broadcast_id = $1 GROUP BY state', [broadcastId]);
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

/**
 * Makes Postgres refuse every recipient row of this broadcast with `sqlstate`, `times` times
 * (each failed batch is one), then accept them; undone by the returned function.
 */
async function faultOnRecipients(broadcastId: string, sqlstate: string, message: string, times = 1_000_000): Promise<() => Promise<void>> {
  const name = `test_fault_${broadcastId.replace(/-/g, '')}`;
  await db.query(`CREATE SEQUENCE ${name}`);
  await db.query(
    `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       IF nextval('${name}') <= ${times} THEN RAISE EXCEPTION '${message}' USING ERRCODE = '${sqlstate}'; END IF;
       RETURN NEW;
     END $$`,
  );
  await db.query(`CREATE TRIGGER ${name} BEFORE INSERT ON mail_broadcast_recipients FOR EACH ROW WHEN (NEW.broadcast_id = '${broadcastId}') EXECUTE FUNCTION ${name}()`);
  return async () => {
    await db.query(`DROP TRIGGER IF EXISTS ${name} ON mail_broadcast_recipients`);
    await db.query(`DROP FUNCTION IF EXISTS ${name}()`);
    await db.query(`DROP SEQUENCE IF EXISTS ${name}`);
  };
}

describe('segment filters Postgres would refuse', () => {
  it('are refused on create and on update with 400 invalid_filter naming the path, and nothing is stored', async () => {
    const org = await organization();
    const cases: [unknown, string][] = [
      [{ field: 'created_at', op: 'in', value: ['x'] }, '/filter/value/0'],
      [{ field: 'created_at', op: 'in', value: ['2026-01-01T00:00:00Z', '2026-02-30T00:00:00Z'] }, '/filter/value/1'],
      [{ field: 'created_at', op: 'eq', value: '2026-13-01T00:00:00Z' }, '/filter/value'],
      [{ field: 'created_at', op: 'gt', value: '2026-01-01T24:30:00Z' }, '/filter/value'],
      [{ field: 'created_at', op: 'lt', value: '0000-01-01T00:00:00Z' }, '/filter/value'],
      [{ field: 'created_at', op: 'neq', value: '2026-01-01T00:00:00+16:00' }, '/filter/value'],
      [{ all: [{ field: 'email', op: 'exists', value: true }, { not: { field: 'created_at', op: 'in', value: ['2026-01-01T00:00:00Z', 'soon'] } }] }, '/filter/all/1/not/value/1'],
    ];
    for (const [filter, path] of cases) {
      const res = await api(org, 'POST', '/api/v1/segments', { name: 'bad', filter });
      expect([res.status, res.body.error?.code, JSON.stringify(filter)]).toEqual([400, 'invalid_filter', JSON.stringify(filter)]);
      expect(res.body.error.details?.[0]?.path ?? res.body.error.message).toBe(path);
    }
    expect((await api(org, 'GET', '/api/v1/segments')).body.data).toEqual([]);
    const good = await api(org, 'POST', '/api/v1/segments', { name: 'good', filter: { field: 'created_at', op: 'in', value: ['2024-02-29T23:59:59.123456+05:30'] } });
    expect(good.status).toBe(201);
    const update = await api(org, 'PATCH', `/api/v1/segments/${good.body.id}`, { filter: { field: 'created_at', op: 'in', value: ['x'] } });
    expect([update.status, update.body.error?.code]).toEqual([400, 'invalid_filter']);
    expect((await api(org, 'GET', `/api/v1/segments/${good.body.id}`)).body.filter).toEqual(good.body.filter);
  });
});

describe('a fan-out that fails for good ends canceled with the reason', () => {
  it('when its segment was stored invalid before segments were checked (legacy data)', async () => {
    const org = await organization();
    await contacts(org, 3, 'legacy');
    const segment = await api(org, 'POST', '/api/v1/segments', { name: 'Old', filter: { field: 'email', op: 'exists', value: true } });
    await db.query('UPDATE mail_segments SET filter = $2 WHERE id = $1', [segment.body.id, JSON.stringify({ field: 'created_at', op: 'in', value: ['x'] })]);
    const members = await api(org, 'GET', `/api/v1/segments/${segment.body.id}/contacts`);
    expect([members.status, members.body.error?.code, members.body.error?.details?.[0]?.path]).toEqual([422, 'segment_filter_invalid', '/filter/value/0']);
    const b = await create(org, { segment_id: segment.body.id });
    expect((await send(org, b.id)).status).toBe(200);
    const ended = await until(org, b.id, 'canceled', 30_000);
    expect(ended.stats).toMatchObject({ eligible: 0, queued: 0 });
    expect(ended.stats.reason).toContain(segment.body.id);
    expect(ended.stats.reason).toMatch(/\/value\/0/);
    expect(ended.finished_at).not.toBeNull();
    expect((await send(org, b.id)).body.error.code).toBe('not_schedulable');
    expect((await api(org, 'GET', `/api/v1/broadcasts/${b.id}/report`)).body).toMatchObject({ status: 'canceled', reason: expect.stringContaining('segment') });
  });

  it('when Postgres refuses its batch on every try (a permanent error)', async () => {
    const org = await organization();
    await contacts(org, 3, 'refused');
    const b = await create(org);
    const undo = await faultOnRecipients(b.id, '23514', 'a row this broadcast cannot store');
    try {
      await send(org, b.id);
      const ended = await until(org, b.id, 'canceled', 30_000);
      expect(ended.stats.reason).toMatch(/a row this broadcast cannot store/);
      expect(ended.stats.reason).toMatch(/new broadcast/);
      expect(ended.stats).toMatchObject({ eligible: 0, queued: 0 });
    } finally {
      await undo();
    }
  });

  it('when no contact\'s message can be made (the subject renders empty for everyone)', async () => {
    const org = await organization();
    await contacts(org, 3, 'empty');
    const b = await create(org, { subject: '{{contact.nickname}}' });
    await send(org, b.id);
    const ended = await until(org, b.id, 'canceled', 30_000);
    expect(ended.stats).toMatchObject({ eligible: 3, queued: 0, skipped: 3 });
    expect(ended.stats.reason).toMatch(/subject renders empty/);
    expect((await api(org, 'GET', `/api/v1/broadcasts/${b.id}/report`)).body).toMatchObject({ status: 'canceled', totals: { recipients: 3, skipped: 3, queued: 0 } });
  });

  it('but a passing outage (Postgres restarting) is retried and the broadcast is sent', async () => {
    const org = await organization();
    await contacts(org, 3, 'outage');
    const b = await create(org);
    const undo = await faultOnRecipients(b.id, '57P01', 'terminating connection due to administrator command', 2);
    try {
      await send(org, b.id);
      const sent = await until(org, b.id, 'sent', 30_000);
      expect(sent.stats).toEqual({ eligible: 3, suppressed: 0, queued: 3, skipped: 0 });
    } finally {
      await undo();
    }
  });
});

describe('the largest content', () => {
  // Batches are bounded by bytes: at production's 64 MB, 2 MB to 400 contacts is 800 MB, past what
  // one string may hold (V8: 512 MB), so the 400 could not go into one statement. Here the bound
  // is 8 MB, so 40 contacts (80 MB) must take at least eight batches: one transaction each, told
  // apart by the recipient rows' xmin.
  it('reaches every contact: 2 MB of HTML to 40 contacts, in batches bounded by bytes', async () => {
    const org = await organization();
    const total = 40;
    await contacts(org, total, 'large');
    const MB2 = 2 * 1024 * 1024;
    const tail = '</p></body></html>';
    const head = '<html><body><p>Hi {{contact.first_name}} ';
    const html = head + 'x'.repeat(MB2 - head.length - tail.length) + tail;
    const b = await create(org, { html });
    try {
      await send(org, b.id);
      const sent = await until(org, b.id, 'sent', 120_000);
      expect(sent.stats).toEqual({ eligible: total, suppressed: 0, queued: total, skipped: 0 });
      const { rows } = await db.query<{ n: number; batches: number; shortest: number; longest: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT r.xmin::text)::int AS batches,
                min(octet_length(m.html))::int AS shortest, max(octet_length(m.html))::int AS longest
           FROM mail_broadcast_recipients r JOIN mail_messages m ON m.id = r.message_id WHERE r.broadcast_id = $1`,
        [b.id],
      );
      expect(rows[0]).toEqual({ n: total, batches: expect.any(Number), shortest: expect.any(Number), longest: expect.any(Number) });
      // A batch takes messages while it holds under 8 MB: at most five of just under 2 MB, so at least eight batches.
      const mostPerBatch = Math.floor(BATCH_BYTES / MB2) + 1;
      expect(rows[0]!.batches).toBeGreaterThanOrEqual(Math.ceil(total / mostPerBatch));
      expect(rows[0]!.shortest).toBeGreaterThan(MB2 - 30);
      expect(rows[0]!.longest).toBeLessThan(MB2);
    } finally {
      // 80 MB for the relays to publish would slow the rest of the file, so they leave the outbox
      // (largest-message.test.ts shows such messages published whole).
      await db.query('DELETE FROM mail_message_outbox o USING mail_broadcast_recipients r WHERE r.broadcast_id = $1 AND o.message_id = r.message_id', [b.id]);
    }
  });
});

describe('the rest of an A/B test', () => {
  /** A testing A/B broadcast to the `pro` segment of 30 contacts, and three of its waiting contacts. */
  async function testing(prefix: string) {
    const org = await organization();
    await contacts(org, 30, prefix, () => ({ plan: 'pro' }));
    const segment = await api(org, 'POST', '/api/v1/segments', { name: 'Pro', filter: { field: 'properties.plan', op: 'eq', value: 'pro' } });
    const b = await create(org, { segment_id: segment.body.id, subject: 'A', subject_b: 'B', ab_test: { percent: 10, wait_minutes: 30, metric: 'opens' } });
    await send(org, b.id);
    const t = await until(org, b.id, 'testing');
    const { rows } = await db.query<{ contact_id: string }>("SELECT contact_id FROM mail_broadcast_recipients WHERE broadcast_id = $1 AND state = 'waiting' ORDER BY contact_id LIMIT 3", [b.id]);
    expect(rows).toHaveLength(3);
    return { org, b: t, waiting: rows.map((r) => r.contact_id) };
  }

  it('goes only to contacts still eligible: one unsubscribed from the topic and one that left the segment are skipped', async () => {
    const { org, b, waiting } = await testing('rest');
    const [leftTopic, leftSegment] = waiting;
    expect((await api(org, 'PUT', `/api/v1/contacts/${leftTopic}/topics/news`, { subscribed: false })).status).toBe(200);
    expect((await api(org, 'PATCH', `/api/v1/contacts/${leftSegment}`, { properties: { plan: 'free' } })).status).toBe(200);
    await api(org, 'POST', `/api/v1/broadcasts/${b.id}/decide`);
    const sent = await until(org, b.id, 'sent');
    const { rows } = await db.query<{ contact_id: string; state: string; message_id: string | null }>(
      'SELECT contact_id, state, message_id FROM mail_broadcast_recipients WHERE broadcast_id = $1 AND contact_id = ANY($2::uuid[])',
      [b.id, [leftTopic, leftSegment]],
    );
    expect(rows.map((r) => [r.state, r.message_id])).toEqual([['skipped', null], ['skipped', null]]);
    expect(sent.stats).toMatchObject({ eligible: 30, queued: 28, skipped: 2 });
  });

  it('counts a contact deleted while waiting as skipped: nothing stays queued that will not be sent', async () => {
    const { org, b, waiting } = await testing('gone');
    expect((await api(org, 'DELETE', `/api/v1/contacts/${waiting[0]}`)).status).toBe(200);
    await api(org, 'POST', `/api/v1/broadcasts/${b.id}/decide`);
    const sent = await until(org, b.id, 'sent');
    const states = await recipientStates(b.id);
    expect(states).toEqual({ queued: 29, skipped: 1 });
    expect(sent.stats).toMatchObject({ eligible: 30, queued: 29, skipped: 1 });
    expect((await get(org, b.id)).stats.queued).toBe(states.queued);
  });
});

describe('GET /api/v1/broadcasts', () => {
  it('pages with limit (1 to 50, default 50) and cursor, newest first, to the last broadcast', async () => {
    const org = await organization();
    const made: string[] = [];
    for (let i = 0; i < 53; i++) made.push((await create(org, { name: `B${i}` })).id);
    const newestFirst = [...made].reverse();
    const first = await api(org, 'GET', '/api/v1/broadcasts');
    expect(first.status).toBe(200);
    expect(first.body.data.map((b: { id: string }) => b.id)).toEqual(newestFirst.slice(0, 50));
    expect(first.body.has_more).toBe(true);
    const second = await api(org, 'GET', `/api/v1/broadcasts?cursor=${first.body.next_cursor}`);
    expect(second.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(second.body.data.map((b: { id: string }) => b.id)).toEqual(newestFirst.slice(50));
    const seen: string[] = [];
    for (let cursor: string | null = null, pages = 0; pages < 30; pages++) {
      const res = await api(org, 'GET', `/api/v1/broadcasts?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...res.body.data.map((b: { id: string }) => b.id));
      cursor = res.body.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(newestFirst);
    for (const query of ['limit=0', 'limit=51', 'limit=x']) expect((await api(org, 'GET', `/api/v1/broadcasts?${query}`)).body.error.code).toBe('validation_failed');
    expect((await api(org, 'GET', '/api/v1/broadcasts?cursor=nope')).body.error.code).toBe('invalid_cursor');
  });

  it('is described so in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${ingress.url}/api/v1/openapi`)).json()) as any;
    const list = doc.paths['/api/v1/broadcasts'].get;
    expect(list.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['cursor', 'limit']);
    expect(list.parameters.find((p: { name: string }) => p.name === 'limit').schema).toMatchObject({ minimum: 1, maximum: 50, default: 50 });
    expect(Object.keys(doc.components.schemas.BroadcastList.properties).sort()).toEqual(['data', 'has_more', 'next_cursor', 'object']);
  });
});
