// Kill -9 of an ingress between storing a message and publishing it (the
// test-only MAIL_TEST_CRASH_AFTER_STORE makes the process kill itself right after
// the commit): after a restart the message is published, once; a replay of its
// key answers the same id and publishes nothing more. Each test starts one or two
// ingress processes: on a slow spell of the machine that alone took most of a minute.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, INGRESS_ENV } from '../../support/ingress.ts';
import { testConfig, eventually } from '../../support/env.ts';
import { childPort, startTs, waitForOutput, type Child } from '../../support/processes.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { publishedRecords } from '../../support/mail/messages.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

const config = testConfig();
let db: pg.Pool;
const children: Child[] = [];

async function ingress(env: Record<string, string> = {}): Promise<{ url: string; child: Child }> {
  const port = childPort();
  const child = startTs('src/main.ts', [], { ...INGRESS_ENV, HTTP_PORT: port, LOG_LEVEL: 'info', API_RATE_LIMIT_PER_SEC: '1000', ...env });
  children.push(child);
  await waitForOutput(child, 'ingress listening');
  return { url: `http://127.0.0.1:${port}`, child };
}

/** Whether the message has left the outbox (it is on the topic). */
const published = async (id: string) => (await db.query('SELECT count(*)::int AS n FROM mail_message_outbox WHERE message_id = $1', [id])).rows[0].n === 0;

// Its own databases: see vitest.config.ts (why this file may run side by side).
useOwnDatabases();

beforeAll(() => {
  db = new pg.Pool({ connectionString: testConfig().DATABASE_URL, max: 2 });
});
afterAll(async () => {
  for (const c of children) if (c.process.exitCode === null && c.process.signalCode === null) c.process.kill('SIGKILL');
  await db?.end();
});

describe('an ingress killed between storing and publishing a message', () => {
  it('publishes it once after a restart (the relay), and a replay publishes nothing more', async () => {
    const crashing = await ingress({ MAIL_TEST_CRASH_AFTER_STORE: 'true' });
    const org = await organizationWithKey(crashing.url);
    const { name } = await verifiedDomain(crashing.url, org.key);
    const body = { from: `shop@${name}`, to: 'buyer@example.com', subject: 'Order 7', text: 'Thanks' };

    const attempt = await call(crashing.url, 'POST', '/emails', { key: org.key, body, headers: { 'idempotency-key': 'order-7' } }).catch((err: Error) => err);
    expect(attempt).toBeInstanceOf(Error);
    expect((await crashing.child.exited).signal).toBe('SIGKILL');
    const { rows } = await db.query("SELECT id FROM mail_messages WHERE organization_id = $1 AND idempotency_key = 'order-7'", [org.organizationId]);
    expect(rows).toHaveLength(1);
    const id: string = rows[0].id;
    expect(await published(id)).toBe(false);

    // Restarted: its relay publishes what was left (items older than 2 s, every second).
    const restarted = await ingress();
    await eventually(() => published(id), 15_000);
    const replay = await call(restarted.url, 'POST', '/emails', { key: org.key, body, headers: { 'idempotency-key': 'order-7' } });
    expect([replay.status, replay.body.id, replay.headers.get('idempotent-replayed')]).toEqual([200, id, 'true']);
    const records = await publishedRecords(config, [id]);
    expect(records.get(id)).toHaveLength(1);
    expect(records.get(id)![0]).toMatchObject({ idempotency_key: 'order-7', subject: 'Order 7' });
  }, 120_000);

  it('a replay right after the crash publishes it, once', async () => {
    const crashing = await ingress({ MAIL_TEST_CRASH_AFTER_STORE: 'true' });
    const running = await ingress();
    const org = await organizationWithKey(running.url);
    const { name } = await verifiedDomain(running.url, org.key);
    const body = { from: `shop@${name}`, to: 'buyer@example.com', subject: 'Order 8', text: 'Thanks' };
    await call(crashing.url, 'POST', '/emails', { key: org.key, body, headers: { 'idempotency-key': 'order-8' } }).catch(() => undefined);
    await crashing.child.exited;
    const replay = await call(running.url, 'POST', '/emails', { key: org.key, body, headers: { 'idempotency-key': 'order-8' } });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    // Published by the replay itself (before it answered), not left for the relay.
    expect(await published(replay.body.id)).toBe(true);
    const records = await publishedRecords(config, [replay.body.id]);
    expect(records.get(replay.body.id)).toHaveLength(1);
  }, 120_000);
});
