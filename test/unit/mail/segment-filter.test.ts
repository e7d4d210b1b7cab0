// The segment filter language: what the parser refuses (with the place) and the shape of the SQL it compiles to.
import { describe, expect, it } from 'vitest';
import { compileSegmentFilter, parseSegmentFilter } from '../../../src/mail/audience/segment-filter.ts';

const errorsOf = (filter: unknown) => {
  const parsed = parseSegmentFilter(filter);
  return parsed.ok ? [] : parsed.errors.map((e) => e.path);
};

describe('parseSegmentFilter', () => {
  it('accepts conditions and nested groups', () => {
    expect(parseSegmentFilter({ all: [{ field: 'email', op: 'contains', value: 'x' }, { any: [{ field: 'properties.plan', op: 'in', value: ['a', 'b'] }, { not: { field: 'created_at', op: 'gt', value: '2026-01-01T00:00:00Z' } }] }] }).ok).toBe(true);
  });

  it('refuses with the JSON pointer of each problem', () => {
    expect(errorsOf({ field: 'shoe', op: 'eq', value: 1 })).toEqual(['/field']);
    expect(errorsOf({ field: 'email', op: 'like', value: 'x' })).toEqual(['/op']);
    expect(errorsOf({ all: [{ field: 'email', op: 'eq', value: 1 }] })).toEqual(['/all/0/value']);
    expect(errorsOf({ any: [] })).toEqual(['/any']);
    expect(errorsOf({ all: [{ field: 'email', op: 'eq', value: 'a', extra: 1 }] })).toEqual(['/all/0/extra']);
    expect(errorsOf({ all: [], any: [] })).toEqual(['']);
    expect(errorsOf({ field: 'properties.n', op: 'gt', value: '5' })).toEqual(['/value']);
    expect(errorsOf({ field: 'first_name', op: 'gt', value: 5 })).toEqual(['/op']);
    expect(errorsOf({ field: 'properties.n', op: 'in', value: [1, 'a'] })).toEqual(['/value']);
    expect(errorsOf({ field: 'created_at', op: 'lt', value: 'yesterday' })).toEqual(['/value']);
    expect(errorsOf({ field: 'email', op: 'exists', value: 'yes' })).toEqual(['/value']);
    expect(errorsOf({ field: 'properties.bad name', op: 'exists', value: true })).toEqual(['/field']);
    expect(errorsOf('email = x')).toEqual(['']);
  });

  it('refuses values Postgres would refuse as the SQL casts them, naming the value (and the element of an in-list)', () => {
    expect(errorsOf({ field: 'created_at', op: 'in', value: ['x'] })).toEqual(['/value/0']);
    expect(errorsOf({ all: [{ field: 'created_at', op: 'in', value: ['2026-01-01T00:00:00Z', '2026-02-29T00:00:00Z'] }] })).toEqual(['/all/0/value/1']);
    for (const bad of ['2026-13-01T00:00:00Z', '2026-04-31T00:00:00Z', '2100-02-29T00:00:00Z', '0000-01-01T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T00:60:00Z',
      '2026-01-01T00:00:60Z', '2026-01-01T00:00:00+16:00', '2026-01-01T00:00:00+01:60', '2026-01-01T00:00:00', '2026-01-01 00:00:00Z', '2026-01-01T00:00:00.1234567Z']) {
      expect([bad, errorsOf({ field: 'created_at', op: 'eq', value: bad })]).toEqual([bad, ['/value']]);
    }
    for (const good of ['2024-02-29T23:59:59.999999Z', '2000-02-29T00:00:00-15:59', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59+00:00']) {
      expect([good, errorsOf({ field: 'created_at', op: 'lte', value: good })]).toEqual([good, []]);
    }
    expect(errorsOf({ field: 'email', op: 'eq', value: 'a\u0000b' })).toEqual(['/value']);
    expect(errorsOf({ field: 'properties.plan', op: 'in', value: ['ok', '\ud800'] })).toEqual(['/value/1']);
    expect(errorsOf({ field: 'first_name', op: 'contains', value: '\udc00x' })).toEqual(['/value']);
  });

  it('limits depth, conditions and in-lists', () => {
    let deep: unknown = { field: 'email', op: 'exists', value: true };
    for (let i = 0; i < 6; i++) deep = { all: [deep] };
    expect(errorsOf(deep)).toHaveLength(1);
    const many = { any: Array.from({ length: 60 }, () => ({ all: [{ field: 'email', op: 'exists', value: true }, { field: 'email', op: 'exists', value: true }] })) };
    expect(errorsOf(many)).toContain('');
    expect(errorsOf({ field: 'email', op: 'in', value: Array.from({ length: 1001 }, (_, i) => `${i}`) })).toEqual(['/value']);
  });
});

describe('compileSegmentFilter', () => {
  it('puts every value and property name into parameters, numbered from the first index', () => {
    const { sql, params } = compileSegmentFilter({ all: [{ field: 'properties.plan', op: 'eq', value: "pro'; DROP TABLE x; --" }, { field: 'first_name', op: 'contains', value: '50%_off' }] }, 3);
    expect(sql).not.toContain('DROP');
    expect(sql).not.toContain('plan');
    expect(sql).toContain('$3');
    expect(sql).toContain('$5');
    expect(params).toEqual(['plan', JSON.stringify("pro'; DROP TABLE x; --"), '%50\\%\\_off%']);
    // Each placeholder is cast to the type its value was checked for.
    expect(sql).toMatch(/\$3::text/);
    expect(sql).toMatch(/\$4::jsonb/);
  });
});
