import { describe, expect, it } from 'vitest';
import { ScanRing } from '../../../src/links/live/scan-ring.ts';

describe("a partition's ring of scans", () => {
  it('gives back each workspace\'s scans after an offset, in order, byte for byte, across slabs, and drops the oldest first', () => {
    const ring = new ScanRing();
    const value = (i: number) => Buffer.from(`scan-${i}-${'x'.repeat(i % 7 === 0 ? 100_000 : 300)}`);
    for (let i = 0; i < 3000; i++) ring.push(i, 1000 + i, i % 3 === 0 ? 'a' : 'b', value(i));
    expect(ring.size).toBe(3000);
    const a = [...ring.after(2500, 'a')];
    expect(a.map((s) => s.offset)).toEqual(Array.from({ length: 3000 }, (_, i) => i).filter((i) => i > 2500 && i % 3 === 0));
    for (const s of a) expect(s.value.equals(value(s.offset))).toBe(true);
    expect([...ring.after(-1, 'c')]).toEqual([]);
    for (let i = 0; i < 2000; i++) ring.shift();
    expect(ring.size).toBe(1000);
    expect(ring.oldest()).toEqual({ offset: 2000, at: 3000 });
    expect([...ring.after(-1, 'b')].map((s) => s.offset)[0]).toBe(2000);
    for (const s of ring.after(-1, 'b')) expect(s.value.equals(value(s.offset))).toBe(true);
    for (let i = 0; i < 1000; i++) ring.shift();
    expect(ring.size).toBe(0);
    expect(ring.oldest()).toBeUndefined();
  });

  it('finds the first scan after any offset by search, gaps in the offsets and a partly dropped first slab included', () => {
    const ring = new ScanRing();
    // Offsets with gaps (tombstones are not kept), over many slabs (large values).
    const offsets = Array.from({ length: 2000 }, (_, i) => i * 3 + 10);
    for (const o of offsets) ring.push(o, o * 10, o % 2 === 0 ? 'a' : 'b', Buffer.alloc(o % 5 === 0 ? 200_000 : 100, o % 256));
    for (let i = 0; i < 37; i++) ring.shift();
    const kept = offsets.slice(37);
    for (const probe of [-1, 0, kept[0]! - 1, kept[0]!, kept[0]! + 1, 3000, 3001, 3002, kept.at(-1)! - 1, kept.at(-1)!, 1e9]) {
      const next = kept.find((o) => o > probe);
      expect(ring.firstAfter(probe), String(probe)).toEqual(next === undefined ? undefined : { offset: next, at: next * 10 });
      expect([...ring.after(probe, 'a')].map((s) => s.offset), String(probe)).toEqual(kept.filter((o) => o > probe && o % 2 === 0));
    }
  });
});
