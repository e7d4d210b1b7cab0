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
});
