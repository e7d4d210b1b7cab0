import { describe, expect, it } from 'vitest';
import { day, ident, inList, join, literal, sql, stringLiteral } from '../../../src/platform/clickhouse/literal.ts';

describe('ClickHouse literal helper', () => {
  it('escapes quotes and backslashes so a value cannot end the literal', () => {
    expect(stringLiteral("O'Brien")).toBe("'O\\'Brien'");
    expect(stringLiteral('a\\')).toBe("'a\\\\'");
    expect(stringLiteral("\\'; DROP TABLE scans; --")).toBe("'\\\\\\'; DROP TABLE scans; --'");
  });

  it('escapes control characters and keeps unicode', () => {
    expect(stringLiteral('a\nb\tc\r\0')).toBe("'a\\nb\\tc\\r\\0'");
    expect(stringLiteral('\u0001\u007f')).toBe("'\\x01\\x7f'");
    expect(stringLiteral('héllo 世界 🎉')).toBe("'héllo 世界 🎉'");
  });

  it('renders numbers only when finite', () => {
    expect(literal(42)).toBe('42');
    expect(literal(-1.5)).toBe('(-1.5)');
    expect(sql`SELECT 1 -${-5}`.text).toBe('SELECT 1 -(-5)');
    expect(literal(-3n)).toBe('(-3)');
    expect(literal(10n)).toBe('10');
    expect(() => literal(Number.NaN)).toThrow(/finite/);
    expect(() => literal(Number.POSITIVE_INFINITY)).toThrow(/finite/);
  });

  it('renders dates as epoch seconds and refuses invalid ones', () => {
    expect(literal(new Date('2026-01-02T03:04:05.678Z'))).toBe('toDateTime(1767323045)');
    expect(() => literal(new Date('nope'))).toThrow(/invalid Date/);
    expect(() => literal(new Date(-1000))).toThrow(/range/);
    expect(day(new Date('2026-03-04T23:59:59Z')).text).toBe("toDate('2026-03-04')");
  });

  it('renders booleans, null and arrays', () => {
    expect(literal(true)).toBe('1');
    expect(literal(false)).toBe('0');
    expect(literal(null)).toBe('NULL');
    expect(literal(['a', "b'", 3])).toBe("['a', 'b\\'', 3]");
  });

  it('refuses values of other types instead of stringifying them', () => {
    expect(() => literal({} as never)).toThrow(/unsupported/);
    expect(() => literal(undefined as never)).toThrow(/unsupported/);
    expect(() => literal((() => 1) as never)).toThrow(/unsupported/);
  });

  it('builds queries from the tagged template with nested fragments', () => {
    const cond = join([sql`a = ${'x'}`, sql`b > ${2}`], ' AND ');
    expect(sql`SELECT * FROM ${ident('scans')} WHERE ${cond}`.text).toBe("SELECT * FROM `scans` WHERE a = 'x' AND b > 2");
  });

  it('renders IN lists and refuses empty ones', () => {
    expect(sql`x IN ${inList(['a', "b'", 1])}`.text).toBe("x IN ('a', 'b\\'', 1)");
    expect(() => inList([])).toThrow(/at least one/);
  });

  it('accepts only plain identifiers', () => {
    expect(ident('scans_v2').text).toBe('`scans_v2`');
    for (const bad of ['', '1abc', 'a-b', 'a`b', 'a b', 'scans; DROP', 'a.b']) expect(() => ident(bad)).toThrow(/identifier/);
  });
});
