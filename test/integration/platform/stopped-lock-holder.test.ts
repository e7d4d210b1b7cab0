// A process stopped (SIGSTOP) while it holds a Postgres lock blocks the others for a bounded time:
// DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS ends its silent session, whether the lock is a worker's
// advisory lock (held across a ClickHouse insert) or a row lock in a transaction. A live holder keeps
// its advisory lock however long it works, and a holder resumed after losing its lock learns it
// (its lease's confirm, its transaction's next statement fail) instead of crashing or writing on.
// A holder stopped after its lease's confirm, before its ClickHouse insert or before that insert's
// last byte (the scan sink's window), stores no row once resumed, after another holder stored them.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClickHouse, type ClickHouse } from '../../../src/platform/clickhouse/client.ts';
import { ident, sql } from '../../../src/platform/clickhouse/literal.ts';
import { testConfig } from '../../support/env.ts';
import { startTs, waitForOutput, type Child } from '../../support/processes.ts';

/** The bound given to the holders, in ms. */
const BOUND = 2000;
/** The inserting holders': their fence allows half of it from a confirm to the insert's last byte, on a busy machine. */
const INSERT_BOUND = 4000;
/** The ClickHouse table the inserting holders write (a plain MergeTree: a single server stores a block sent twice twice). */
const ROWS_TABLE = 'lock_probe_rows';
let db: pg.Client;
let ch: ClickHouse;

beforeAll(async () => {
  db = new pg.Client({ connectionString: testConfig().DATABASE_URL });
  await db.connect();
  await db.query('CREATE TABLE IF NOT EXISTS lock_probe (id text PRIMARY KEY, holder text)');
  ch = createClickHouse(testConfig());
  await ch.exec(sql`CREATE TABLE IF NOT EXISTS ${ident(ROWS_TABLE)} (id String) ENGINE = MergeTree ORDER BY id`);
});
afterAll(async () => {
  await db?.end();
  await ch?.close();
});

/** The rows an inserting holder writes: <id>-0 … <id>-19999 (test/fixtures/lock-holder.ts). */
const HOLDER_ROWS = 20_000;

const rowsOf = async (id: string): Promise<number> =>
  Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM ${ident(ROWS_TABLE)} WHERE startsWith(id, ${`${id}-`})`))[0]!.n);

const holder = (...args: string[]): Child => startTs('test/fixtures/lock-holder.ts', args, { DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: String(args[0] === 'insert' ? INSERT_BOUND : BOUND) });

/** Stops the holder once it holds its lock; resolves to how long `blocked` then waited. */
async function waitBehindStopped(child: Child, blocked: () => Promise<unknown>): Promise<number> {
  await waitForOutput(child, 'held');
  child.process.kill('SIGSTOP');
  const stoppedAt = Date.now();
  await blocked();
  return Date.now() - stoppedAt;
}

async function resumeAndEnd(child: Child): Promise<string> {
  child.process.kill('SIGCONT');
  const { code } = await child.exited;
  expect(code, child.output()).toBe(0);
  return child.output().trim().split('\n').at(-1)!;
}

it('frees the advisory lock of a stopped holder within the bound; resumed, its lease says it is lost', async () => {
  const name = `stopped-${randomUUID()}`;
  const child = holder('advisory', name, '1000');
  const waited = await waitBehindStopped(child, () => db.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [name]));
  // The session went silent at its last keepalive, at most a third of the bound before the stop.
  expect(waited).toBeGreaterThan(BOUND / 2);
  expect(waited).toBeLessThan(BOUND + 1500);
  expect(await resumeAndEnd(child)).toMatch(/^lost: lost the lock/);
  await db.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [name]);
});

it('keeps the advisory lock of a live holder for longer than the bound', async () => {
  const name = `live-${randomUUID()}`;
  const child = holder('advisory', name, String(2.5 * BOUND));
  await waitForOutput(child, 'held');
  const taken: boolean[] = [];
  while (child.process.exitCode === null) {
    const { rows } = await db.query<{ got: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS got', [name]);
    taken.push(rows[0]!.got);
    if (rows[0]!.got) await db.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [name]);
    await new Promise((r) => setTimeout(r, 250));
  }
  expect(child.output().trim().split('\n').at(-1)).toBe('kept');
  expect(taken.length).toBeGreaterThan(10);
  expect(taken.slice(0, 10)).not.toContain(true);
});

it('frees a row locked in the transaction of a stopped holder within the bound; resumed, its transaction fails', async () => {
  const id = randomUUID();
  await db.query('INSERT INTO lock_probe (id) VALUES ($1)', [id]);
  const child = holder('row', 'lock_probe', id, '1000');
  const waited = await waitBehindStopped(child, () => db.query(`UPDATE lock_probe SET holder = 'test' WHERE id = $1`, [id]));
  expect(waited).toBeGreaterThan(BOUND / 2);
  expect(waited).toBeLessThan(BOUND + 1500);
  expect(await resumeAndEnd(child)).toMatch(/^lost: /);
  expect((await db.query('SELECT holder FROM lock_probe WHERE id = $1', [id])).rows).toEqual([{ holder: 'test' }]);
});

it('a holder that confirmed its lease and inserts at once stores its rows', async () => {
  const id = randomUUID();
  const child = holder('insert', `insert-${id}`, ROWS_TABLE, id, 'none');
  const { code } = await child.exited;
  expect(code, child.output()).toBe(0);
  expect(child.output().trim().split('\n').at(-1)).toBe('kept');
  expect(await rowsOf(id)).toBe(HOLDER_ROWS);
});

for (const stop of ['before-insert', 'before-last-byte']) {
  it(`a holder stopped after its confirm (${stop}) stores no row once resumed, after another holder stored them`, async () => {
    const id = randomUUID();
    const name = `insert-${id}`;
    const child = holder('insert', name, ROWS_TABLE, id, stop);
    await waitForOutput(child, 'confirmed');
    // The next holder gets the lock once Postgres ended the stopped one's session, and stores the rows.
    await db.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [name]);
    await ch.exec(sql`INSERT INTO ${ident(ROWS_TABLE)} (id) SELECT concat(${`${id}-`}, toString(number)) FROM system.numbers LIMIT ${HOLDER_ROWS}`);
    await db.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [name]);
    // Refused by the lease's age, or by the session's end if the client heard of it first.
    expect(await resumeAndEnd(child)).toMatch(/^lost: (the lock .* was last confirmed \d+ ms ago|lost the lock)/);
    expect(await rowsOf(id)).toBe(HOLDER_ROWS);
  });
}

it('an insert whose fence throws before its last byte stores none of its rows, and rejects with that error', async () => {
  const id = randomUUID();
  let fences = 0;
  const refused = new Error('refused at the end');
  const fence = () => {
    if (++fences === 2) throw refused;
  };
  const rows = Array.from({ length: 20_000 }, (_, i) => `${id}-${i}`);
  const inserting = ch.insertRowBinary(ROWS_TABLE, [{ name: 'id', type: 'String', of: (row: string) => row }], rows, { fence });
  await expect(inserting).rejects.toBe(refused);
  expect(fences).toBe(2);
  expect(await rowsOf(id)).toBe(0);
});
