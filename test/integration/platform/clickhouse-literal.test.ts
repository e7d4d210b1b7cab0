// Values that go through the literal helper reach real ClickHouse intact and
// cannot change the query: quotes, backslashes, control characters, unicode.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClickHouse, type ClickHouse } from '../../../src/platform/clickhouse/client.ts';
import { ident, inList, inStrings, sql } from '../../../src/platform/clickhouse/literal.ts';
import { onEveryServer } from '../../support/clickhouse-servers.ts';
import { testConfig } from '../../support/env.ts';

let ch: ClickHouse;
const table = ident('literal_probe');

beforeAll(async () => {
  ch = createClickHouse(testConfig());
  await onEveryServer(testConfig(), sql`CREATE TABLE IF NOT EXISTS ${table} (k String, v String, n Float64, at DateTime) ENGINE = MergeTree ORDER BY k`);
  await ch.exec(sql`TRUNCATE TABLE ${table}`);
});
afterAll(async () => {
  await ch?.close();
});

const nasty = [
  "O'Brien",
  'back\\slash',
  "\\'",
  "'; DROP TABLE literal_probe; --",
  "x' OR '1'='1",
  'line\nbreak\ttab\r\0nul',
  '\u0001\u001f\u007f',
  'héllo 世界 🎉 Ω',
  '',
];

describe('ClickHouse literal helper against the server', () => {
  it('stores and finds back every nasty string exactly', async () => {
    const at = new Date('2026-11-22T10:11:12Z');
    for (const [i, value] of nasty.entries()) {
      await ch.exec(sql`INSERT INTO ${table} (k, v, n, at) VALUES (${`k${i}`}, ${value}, ${i + 0.5}, ${at})`);
    }
    for (const [i, value] of nasty.entries()) {
      const rows = await ch.rows<{ k: string; v: string; n: number; at: string }>(sql`SELECT k, v, n, toUnixTimestamp(at) AS at FROM ${table} WHERE v = ${value}`);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.k).toBe(`k${i}`);
      expect(rows[0]!.v).toBe(value);
      expect(rows[0]!.n).toBe(i + 0.5);
      expect(Number(rows[0]!.at)).toBe(at.getTime() / 1000);
    }
    // The table is still there and holds exactly what was inserted.
    const count = await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM ${table}`);
    expect(Number(count[0]!.n)).toBe(nasty.length);
  });

  it('matches arrays of values with has()', async () => {
    const rows = await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM ${table} WHERE has(${nasty.slice(0, 3)}, v)`);
    expect(Number(rows[0]!.n)).toBe(3);
  });

  it('matches large IN sets sent as one split literal, and those with commas as a list', async () => {
    const filler = Array.from({ length: 300 }, (_, i) => `absent-${i}`);
    const withoutCommas = [...filler, ...nasty];
    expect(inStrings(withoutCommas).text).toContain('splitByChar');
    const found = await ch.rows<{ v: string }>(sql`SELECT v FROM ${table} WHERE v IN ${inStrings(withoutCommas)}`);
    expect(found.map((r) => r.v).sort()).toEqual([...nasty].sort());

    const withComma = [...filler, 'a,b', nasty[0]!];
    expect(inStrings(withComma).text).not.toContain('splitByChar');
    const some = await ch.rows<{ v: string }>(sql`SELECT v FROM ${table} WHERE v IN ${inStrings(withComma)}`);
    expect(some.map((r) => r.v)).toEqual([nasty[0]]);
  });

  it('matches values sent beside the query as a table of their own (rowsWith), every nasty string exactly', async () => {
    const filler = Array.from({ length: 20_000 }, (_, i) => `absent-${i}`);
    const found = await ch.rowsWith<{ v: string }>(sql`SELECT v FROM ${table} WHERE v IN probe_values`, { name: 'probe_values', column: 'v', values: [...filler, ...nasty, 'a,b'] });
    expect(found.map((r) => r.v).sort()).toEqual([...nasty].sort());
    // A value that is no row's finds nothing; the table still holds what was inserted.
    expect(await ch.rowsWith(sql`SELECT v FROM ${table} WHERE v IN probe_values`, { name: 'probe_values', column: 'v', values: ["x' OR '1'='1\\"] })).toEqual([]);
    const count = await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM ${table}`);
    expect(Number(count[0]!.n)).toBe(nasty.length);
  });

  it('runs statements longer than the default max_query_size (256 KiB)', async () => {
    const ids = [...Array.from({ length: 12_000 }, (_, i) => `a-long-enough-identifier-${i}`), nasty[0]!];
    const query = sql`SELECT v FROM ${table} WHERE v IN ${inList(ids)}`;
    expect(Buffer.byteLength(query.text)).toBeGreaterThan(256 * 1024);
    const rows = await ch.rows<{ v: string }>(query);
    expect(rows.map((r) => r.v)).toEqual([nasty[0]]);
  });
});
