// A worker process killed with SIGKILL mid-stream and started again processes
// every message exactly once in effect, in Postgres (message handler) and in
// ClickHouse (batch sink): offsets are committed only after effects are durable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ident, sql } from '../../../src/platform/clickhouse/literal.ts';
import { startPlatform, type Platform } from '../../../src/platform/platform.ts';
import { deadLettersTopic } from '../../../src/platform/actors/dead-letters-topic.ts';
import { probeTopic, type Probe } from '../../fixtures/probe-topics.ts';
import { onEveryServer } from '../../support/clickhouse-servers.ts';
import { eventually, testConfig } from '../../support/env.ts';
import { startTs, waitForOutput } from '../../support/processes.ts';

const TOTAL = 1500;
const topic = probeTopic('probe.crash', 3);
let platform: Platform;

beforeAll(async () => {
  platform = await startPlatform(testConfig(), { name: 'test', topics: [topic, deadLettersTopic], migrate: false });
  await platform.pg.query('CREATE TABLE IF NOT EXISTS probe_effects (id text PRIMARY KEY, actor text NOT NULL, seq int NOT NULL)');
  await platform.pg.query('CREATE TABLE IF NOT EXISTS probe_attempts (id text NOT NULL)');
  await onEveryServer(testConfig(), sql`CREATE TABLE IF NOT EXISTS ${ident('probe_effects')} (id String, actor String, seq UInt32) ENGINE = ReplacingMergeTree ORDER BY id`);
});
afterAll(async () => {
  await platform?.shutdown.run('test done');
});

const pgCount = async () => Number((await platform.pg.query('SELECT count(*) AS n FROM probe_effects')).rows[0].n);
const pgAttempts = async () => Number((await platform.pg.query('SELECT count(*) AS n FROM probe_attempts')).rows[0].n);
const chCount = async () => Number((await platform.clickhouse.rows<{ n: string }>(sql`SELECT count() AS n FROM ${ident('probe_effects')} FINAL`))[0]!.n);
const chRaw = async () => Number((await platform.clickhouse.rows<{ n: string }>(sql`SELECT count() AS n FROM ${ident('probe_effects')}`))[0]!.n);

describe('a worker process killed mid-stream', () => {
  it('loses nothing and duplicates no effect after SIGKILL and restart', async () => {
    const messages = Array.from({ length: TOTAL }, (_, i) => ({
      key: `actor-${i % 17}`,
      value: { id: `m-${i}`, seq: i, text: 'crash', amount: null, at: Date.now() } satisfies Probe,
    }));
    for (let i = 0; i < TOTAL; i += 500) await platform.publisher.publish(topic, messages.slice(i, i + 500));

    const first = startTs('test/fixtures/probe-worker.ts', ['probe.crash', '5']);
    await waitForOutput(first, 'probe-worker ready');
    // Kill it while it is part-way through.
    await eventually(async () => (await pgCount()) >= TOTAL / 5, 60_000, 50);
    first.process.kill('SIGKILL');
    const killed = await first.exited;
    expect(killed.signal).toBe('SIGKILL');
    const atKill = await pgCount();
    expect(atKill).toBeLessThan(TOTAL);

    const second = startTs('test/fixtures/probe-worker.ts', ['probe.crash', '1']);
    await waitForOutput(second, 'probe-worker ready');
    await eventually(async () => (await pgCount()) === TOTAL && (await chCount()) === TOTAL, 120_000, 250);

    // Let any replay settle, then check nothing went over.
    await new Promise((r) => setTimeout(r, 2000));
    expect(await pgCount()).toBe(TOTAL);
    expect(await chCount()).toBe(TOTAL);
    const distinctSeq = Number((await platform.pg.query('SELECT count(DISTINCT seq) AS n FROM probe_effects')).rows[0].n);
    expect(distinctSeq).toBe(TOTAL);
    // Attempts >= effects: replays happened or not, but the effect count is exact either way.
    expect(await pgAttempts()).toBeGreaterThanOrEqual(TOTAL);
    expect(await chRaw()).toBeGreaterThanOrEqual(TOTAL);

    // A graceful stop drains and exits cleanly.
    second.process.kill('SIGTERM');
    const stopped = await second.exited;
    expect(stopped.code).toBe(0);
  });
});
