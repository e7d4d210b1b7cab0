import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatCursor, parseCursor } from '../../../src/links/live/live-cursor.ts';

describe('live stream cursors (Last-Event-ID)', () => {
  it('read back what they wrote, for any partitions and offsets', () => {
    fc.assert(fc.property(fc.dictionary(fc.integer({ min: 0, max: 63 }).map(String), fc.integer({ min: -1, max: Number.MAX_SAFE_INTEGER }), { minKeys: 1 }), (d) => {
      const cursor = new Map(Object.entries(d).map(([p, o]) => [Number(p), o]));
      expect(parseCursor(formatCursor(cursor))).toEqual(cursor);
    }));
  });

  it('refuse what they never wrote', () => {
    for (const text of ['', 'abc', '0.1_0.2', '64.1', '0.', '.1', '0.-2', '0.1_', '0.1;1.2', '0.A', `0.${'z'.repeat(12)}`, '1'.repeat(2000)]) {
      expect(parseCursor(text), text).toBeUndefined();
    }
    expect(parseCursor('0.-1_5.2s')).toEqual(new Map([[0, -1], [5, 100]]));
  });
});
