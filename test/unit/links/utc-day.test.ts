// The visitor hash's daily salt: the UTC day of a scan's time, remembered for the day it is in.
import { describe, expect, it } from 'vitest';
import { utcDayOf } from '../../../src/links/scans/visitor.ts';

describe('utcDayOf', () => {
  it('gives the UTC day of any time, at a day\'s first and last millisecond, going back and forth between days', () => {
    const times = [Date.UTC(2026, 11, 6, 0, 0, 0, 0), Date.UTC(2026, 11, 6, 23, 59, 59, 999), Date.UTC(2026, 11, 7), Date.UTC(2026, 11, 6, 12), Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2024, 2, 1), 0, 1, Date.UTC(2026, 11, 5, 23, 59, 59, 999)];
    for (let round = 0; round < 3; round++) {
      for (const t of times) expect(utcDayOf(t)).toBe(new Date(t).toISOString().slice(0, 10));
    }
  });
});
