// The ClickHouse client over three replicas of its own (test/support/clickhouse-replicas.ts): reads take
// turns over the replicas that serve, and move off one killed with kill -9 or hung with SIGSTOP within
// 2 s; a write goes to a live replica, a write caught on a hung one fails as ServerUnavailable and its
// retry lands once (block deduplication); per-query settings reach the server; a replica started or
// resumed again is read from again.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClickHouse, type ClickHouse } from '../../../src/platform/clickhouse/client.ts';
import { ident, sql } from '../../../src/platform/clickhouse/literal.ts';
import { ServerUnavailable } from '../../../src/platform/clickhouse/server-health.ts';
import { startTestReplicas, REPLICAS, type TestReplicas } from '../../support/clickhouse-replicas.ts';
import { eventually, testConfig } from '../../support/env.ts';

const DB = 'failover';
let replicas: TestReplicas;
let ch: ClickHouse;

/** Which replica answered: its `replica` macro. */
const whoAnswers = async (): Promise<string> =>
  (await ch.rows<{ r: string }>(sql`SELECT substitution AS r FROM system.macros WHERE macro = 'replica'`))[0]!.r;

/** Which replicas answer `reads` reads in a row, each timed. */
async function readsFrom(reads: number): Promise<{ answered: Set<string>; slowestMs: number }> {
  const answered = new Set<string>();
  let slowestMs = 0;
  for (let i = 0; i < reads; i++) {
    const start = Date.now();
    answered.add(await whoAnswers());
    slowestMs = Math.max(slowestMs, Date.now() - start);
  }
  return { answered, slowestMs };
}

const rowsOf = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ id: from + i }));

beforeAll(async () => {
  replicas = await startTestReplicas();
  for (const r of REPLICAS) {
    await replicas.query(r, `CREATE DATABASE ${DB}`);
    await replicas.query(r, `CREATE TABLE ${DB}.t (id UInt64) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/${DB}/t', '{replica}') ORDER BY id`);
  }
  ch = createClickHouse(testConfig(replicas.env), DB);
}, 120_000);

afterAll(async () => {
  await ch?.close();
  await replicas?.release();
});

it('spreads reads over the three replicas, and passes per-query settings (a quorum insert, a sequentially consistent read)', async () => {
  expect((await readsFrom(9)).answered).toEqual(new Set(['replica-1', 'replica-2', 'replica-3']));
  await ch.insert('t', rowsOf(0, 100), { settings: { insert_quorum: '2' } });
  const consistent = await ch.rows<{ value: string }>(sql`SELECT value FROM system.settings WHERE name = 'select_sequential_consistency'`, { settings: { select_sequential_consistency: '1' } });
  expect(consistent).toEqual([{ value: '1' }]);
  expect(await ch.rows(sql`SELECT count() AS n FROM ${ident(DB)}.t`, { settings: { select_sequential_consistency: '1' } })).toEqual([{ n: '100' }]);
  // A setting the server does not know is refused there: the settings reach it.
  await expect(ch.rows(sql`SELECT 1`, { settings: { no_such_setting: 1 } as never })).rejects.toThrow(/Unknown setting no_such_setting/);
});

it('moves reads and writes off a replica killed with kill -9 within 2 s', async () => {
  await replicas.kill(1);
  const { answered, slowestMs } = await readsFrom(12);
  expect(answered).toEqual(new Set(['replica-2', 'replica-3']));
  expect(slowestMs).toBeLessThan(2000);
  // Writes went to replica 1 (the first): now to a live one, refused connections never reached it.
  await ch.insert('t', rowsOf(100, 100), { settings: { insert_quorum: '2' } });
  await ch.exec(sql`INSERT INTO ${ident(DB)}.t SELECT number + 200 FROM system.numbers LIMIT 100`, { settings: { insert_quorum: '2' } });
  // Counted on each live replica once it has fetched what it lacks: a sequentially consistent read is not
  // enough here, as 18.16 checks only that the replica holds the last quorum insert. The replica that was
  // not in the first insert's quorum may still be fetching that insert from the other (its fetch from the
  // killed replica failed) while it already holds the later ones: it answered 200 of 300 in a CI run.
  for (const r of [2, 3] as const) {
    await replicas.query(r, `SYSTEM SYNC REPLICA ${DB}.t`);
    expect(await replicas.query(r, `SELECT count(), uniqExact(id) FROM ${DB}.t`), `replica ${r}`).toBe('300\t300\n');
  }
}, 60_000);

it('moves reads off a hung replica (SIGSTOP) within 2 s; a write caught on it fails as ServerUnavailable, and its retry is stored once', async () => {
  // Replica 1 is down, so writes go to replica 2, which hangs.
  replicas.pause(2);
  try {
    const start = Date.now();
    const caught = await ch.insert('t', rowsOf(300, 100)).catch((err: unknown) => err);
    expect(caught).toBeInstanceOf(ServerUnavailable);
    expect(Date.now() - start).toBeLessThan(2000);
    // The caller's retry goes to replica 3; the same block, should replica 2 apply its copy once resumed, is deduplicated.
    await ch.insert('t', rowsOf(300, 100));
    const { answered, slowestMs } = await readsFrom(12);
    expect(answered).toEqual(new Set(['replica-3']));
    expect(slowestMs).toBeLessThan(2000);
  } finally {
    replicas.resume(2);
  }
}, 60_000);

it('reads from a replica again once it is back (resumed, or started again after the kill), and every row is on every replica once', async () => {
  await replicas.restart();
  await eventually(async () => (await readsFrom(9)).answered.size === 3, 15_000);
  for (const r of REPLICAS) {
    await replicas.query(r, `SYSTEM SYNC REPLICA ${DB}.t`);
    expect(await replicas.query(r, `SELECT count(), uniqExact(id) FROM ${DB}.t`)).toBe('400\t400\n');
  }
}, 60_000);
