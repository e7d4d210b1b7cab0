// withAppliedOffsets on a real Postgres: an effect and the partition's applied
// offset commit together, so a batch delivered again (a replay after a crash or
// a rebalance) is applied once, and a redelivery at a lower offset is skipped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withAppliedOffsets } from '../../../src/platform/actors/applied-offsets.ts';
import type { ActorMessage } from '../../../src/platform/actors/worker-kind.ts';
import { createPool, type Pool } from '../../../src/platform/postgres/pool.ts';
import { testConfig } from '../../support/env.ts';

let pg: Pool;

beforeAll(async () => {
  pg = createPool(testConfig());
  await pg.query('CREATE TABLE IF NOT EXISTS probe_applied (group_id text NOT NULL, id text NOT NULL)');
});
afterAll(async () => {
  await pg?.end();
});

const batch = (partition: number, from: number, count: number): ActorMessage<string>[] =>
  Array.from({ length: count }, (_, i) => ({
    topic: 'probe.offsets',
    partition,
    offset: String(from + i),
    key: 'k',
    value: `p${partition}-o${from + i}`,
    timestamp: Date.now(),
    headers: {},
  }));

/** Applies a batch: one probe_applied row per fresh message (after `slowMs`); resolves to the values applied. */
const apply = (group: string, messages: ActorMessage<string>[], slowMs = 0) =>
  withAppliedOffsets(pg, group, messages, async (client, fresh) => {
    await new Promise((r) => setTimeout(r, slowMs));
    for (const m of fresh) await client.query('INSERT INTO probe_applied (group_id, id) VALUES ($1, $2)', [group, m.value]);
    return fresh.map((m) => m.value);
  });

const applied = async (group: string) =>
  (await pg.query<{ id: string }>('SELECT id FROM probe_applied WHERE group_id = $1 ORDER BY id', [group])).rows.map((r) => r.id);

describe('withAppliedOffsets', () => {
  it('applies a batch delivered twice once', async () => {
    const group = `twice-${Date.now()}`;
    expect(await apply(group, batch(0, 0, 3))).toEqual(['p0-o0', 'p0-o1', 'p0-o2']);
    expect(await apply(group, batch(0, 0, 3))).toBeUndefined();
    expect(await applied(group)).toEqual(['p0-o0', 'p0-o1', 'p0-o2']);
  });

  it('skips a redelivery at a lower offset and hands over only the messages after the applied one', async () => {
    const group = `lower-${Date.now()}`;
    await apply(group, batch(1, 10, 5)); // offsets 10..14
    expect(await apply(group, batch(1, 12, 1))).toBeUndefined();
    expect(await apply(group, batch(1, 13, 4))).toEqual(['p1-o15', 'p1-o16']);
    expect((await applied(group)).filter((id) => id.startsWith('p1-o1')).length).toBe(7);
  });

  it('keeps offsets apart per partition and group', async () => {
    const group = `apart-${Date.now()}`;
    await apply(group, batch(0, 5, 1));
    expect(await apply(group, batch(2, 0, 1))).toEqual(['p2-o0']);
    expect(await apply(`${group}-other`, batch(0, 5, 1))).toEqual(['p0-o5']);
  });

  it('records nothing when the effect fails, so the batch is applied on its next delivery', async () => {
    const group = `fails-${Date.now()}`;
    const failing = withAppliedOffsets(pg, group, batch(0, 0, 2), async (client, fresh) => {
      await client.query('INSERT INTO probe_applied (group_id, id) VALUES ($1, $2)', [group, fresh[0]!.value]);
      throw new Error('effect failed');
    });
    await expect(failing).rejects.toThrow('effect failed');
    expect(await applied(group)).toEqual([]);
    expect(await apply(group, batch(0, 0, 2))).toEqual(['p0-o0', 'p0-o1']);
  });

  it('applies a batch once when two consumers hand it over at the same time (a rebalance)', async () => {
    const group = `race-${Date.now()}`;
    // Slow effects, so both transactions are open at once.
    const results = await Promise.all([apply(group, batch(0, 0, 3), 300), apply(group, batch(0, 0, 3), 300)]);
    expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    expect(await applied(group)).toEqual(['p0-o0', 'p0-o1', 'p0-o2']);
  });
});
