// The generic outbox relay on a real Postgres table and a real topic: items
// older than the age are published and marked, a failing batch does not stop
// the others, and a relay run never throws.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutboxSource } from '../../../src/platform/outbox/outbox.ts';
import { outboxRelay } from '../../../src/platform/outbox/outbox-relay.ts';
import { startOutboxRelays } from '../../../src/platform/outbox/start-outbox-relays.ts';
import { startPlatform, type Platform } from '../../../src/platform/platform.ts';
import { probeTopic, type Probe } from '../../fixtures/probe-topics.ts';
import { eventually, testConfig } from '../../support/env.ts';
import { readTopic } from '../../support/topic-reader.ts';

const topic = probeTopic('probe.outbox', 1);
let platform: Platform;

beforeAll(async () => {
  platform = await startPlatform(testConfig(), { name: 'test', topics: [topic], migrate: false });
  await platform.pg.query(`CREATE TABLE IF NOT EXISTS probe_outbox (
    id text PRIMARY KEY, text text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), published_at timestamptz)`);
});
afterAll(async () => {
  await platform?.shutdown.run('test done');
});

interface Row {
  id: string;
  text: string;
}

/** A tiny outbox: rows of probe_outbox, published as probes; a row whose text is 'poison' cannot be published. */
function probeOutbox(batchSize?: number): OutboxSource<Row> {
  return {
    name: 'probe.outbox',
    pending: async (ageMs, limit) =>
      (
        await platform.pg.query<Row>(
          `SELECT id, text FROM probe_outbox WHERE published_at IS NULL AND created_at < now() - make_interval(secs => $1::double precision / 1000)
            ORDER BY created_at, id LIMIT $2`,
          [ageMs, limit],
        )
      ).rows,
    publish: async (rows) => {
      if (rows.some((r) => r.text === 'poison')) throw new Error('poison');
      await platform.publisher.publish<Probe>(topic, rows.map((r, seq) => ({ key: r.id, value: { id: r.id, seq, text: r.text, amount: null, at: Date.now() } })));
      await platform.pg.query('UPDATE probe_outbox SET published_at = now() WHERE id = ANY($1::text[])', [rows.map((r) => r.id)]);
    },
    idOf: (r) => r.id,
    batchSize,
  };
}

const insert = (ids: string[], text: string, agoMs: number) =>
  platform.pg.query(`INSERT INTO probe_outbox (id, text, created_at) SELECT unnest($1::text[]), $2, now() - make_interval(secs => $3::double precision / 1000)`, [ids, text, agoMs]);

const unpublished = async (prefix: string) =>
  (await platform.pg.query<{ id: string }>('SELECT id FROM probe_outbox WHERE id LIKE $1 AND published_at IS NULL ORDER BY id', [`${prefix}%`])).rows.map((r) => r.id);

describe('outbox relay', () => {
  it('publishes and marks items older than the age, leaving younger ones', async () => {
    await insert(['age-old-1', 'age-old-2'], 'old', 10_000);
    await insert(['age-young'], 'young', 0);
    await outboxRelay(probeOutbox(), platform.log).relayOnce(5000);
    expect(await unpublished('age-')).toEqual(['age-young']);
    const messages = await readTopic<Probe>(platform.config, topic.name, (m) => m.filter((x) => x.key.startsWith('age-old')).length >= 2);
    expect(messages.filter((m) => m.key.startsWith('age-')).map((m) => m.key).sort()).toEqual(['age-old-1', 'age-old-2']);
  });

  it('keeps publishing the other items when one fails, and retries the failed one later', async () => {
    await insert(['iso-1'], 'fine', 10_000);
    await insert(['iso-2'], 'poison', 9_000);
    await insert(['iso-3'], 'fine', 8_000);
    await outboxRelay(probeOutbox(1), platform.log).relayOnce(0);
    expect(await unpublished('iso-')).toEqual(['iso-2']);
    await platform.pg.query(`UPDATE probe_outbox SET text = 'cured' WHERE id = 'iso-2'`);
    await outboxRelay(probeOutbox(1), platform.log).relayOnce(0);
    expect(await unpublished('iso-')).toEqual([]);
  });

  it('never throws: neither when the pending items cannot be read nor when a whole batch fails', async () => {
    const broken: OutboxSource<Row> = { ...probeOutbox(), pending: () => Promise.reject(new Error('database away')) };
    await expect(outboxRelay(broken, platform.log).relayOnce(0)).resolves.toBeUndefined();
    await insert(['all-1'], 'poison', 1000);
    await expect(outboxRelay(probeOutbox(), platform.log).relayOnce(0)).resolves.toBeUndefined();
    expect(await unpublished('all-')).toEqual(['all-1']);
    await platform.pg.query(`UPDATE probe_outbox SET published_at = now() WHERE id = 'all-1'`);
  });

  it('relays every registered outbox on its interval until stopped', async () => {
    const relays = startOutboxRelays([outboxRelay(probeOutbox(), platform.log)], { ageMs: 0, intervalMs: 50 });
    try {
      await insert(['loop-1', 'loop-2'], 'loop', 0);
      await eventually(async () => (await unpublished('loop-')).length === 0, 10_000, 50);
    } finally {
      await relays.stop();
    }
    await insert(['stopped-1'], 'late', 1000);
    await new Promise((r) => setTimeout(r, 200));
    expect(await unpublished('stopped-')).toEqual(['stopped-1']);
  });
});
