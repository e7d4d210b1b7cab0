// The hours an erasure recomputes, as ranges (scan-rollups.ts): consecutive hours become one
// range, and at most `max` ranges are made by closing the smallest gaps first.
import { describe, expect, it } from 'vitest';
import { hourRanges } from '../../../src/links/privacy/scan-rollups.ts';

const H = 3_600_000;
const at = (...hours: number[]) => hours.map((h) => h * H);
const plain = (ranges: ReturnType<typeof hourRanges>) => ranges.map((r) => [r.from.getTime() / H, r.to.getTime() / H]);

describe('hourRanges', () => {
  it('makes one range of consecutive hours, however many, and ignores order and repeats', () => {
    expect(plain(hourRanges(Array.from({ length: 26_280 }, (_, i) => i * H).reverse(), 128))).toEqual([[0, 26_280]]);
    expect(plain(hourRanges(at(5, 3, 4, 4, 9), 128))).toEqual([[3, 6], [9, 10]]);
    expect(hourRanges([], 128)).toEqual([]);
  });

  it('closes the smallest gaps first until at most max ranges are left', () => {
    // Gaps: 1 (after 0), 5 (after 2), 1 (after 8), 20 (after 10).
    const hours = at(0, 2, 8, 10, 31);
    expect(plain(hourRanges(hours, 5))).toEqual([[0, 1], [2, 3], [8, 9], [10, 11], [31, 32]]);
    expect(plain(hourRanges(hours, 3))).toEqual([[0, 3], [8, 11], [31, 32]]);
    expect(plain(hourRanges(hours, 2))).toEqual([[0, 11], [31, 32]]);
    expect(plain(hourRanges(hours, 1))).toEqual([[0, 32]]);
    // Ties: only as many as needed are closed, the first ones.
    expect(plain(hourRanges(at(0, 2, 4, 6), 3))).toEqual([[0, 3], [4, 5], [6, 7]]);
  });

  it('stays within max for every sparse pattern', () => {
    const hours = Array.from({ length: 20_000 }, (_, i) => (i * 2 + (i % 7)) * H);
    const ranges = hourRanges(hours, 128);
    expect(ranges.length).toBeLessThanOrEqual(128);
    for (const h of hours) expect(ranges.some((r) => r.from.getTime() <= h && h < r.to.getTime())).toBe(true);
  });
});
