// The analytics API's ranges (analytics, export, conversions, orphan visits, MCP) refuse a date that is
// no day of the calendar with 400 validation_failed. The API's date-time format check let 2026-02-30
// through, and Date.parse read it as March 2nd: a range other than the one asked for.
import { describe, expect, it } from 'vitest';
import { rawRange, resolveRange } from '../../../src/links/analytics/time-range.ts';
import { ApiError } from '../../../src/platform/http/errors.ts';

const NOW = Date.UTC(2026, 11, 6, 7, 20, 0);

function refusal(run: () => unknown): { status: number; code: string; path: string | undefined } | undefined {
  try {
    run();
    return undefined;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { status: err.statusCode, code: err.code, path: err.details?.[0]?.path };
  }
}

describe('dates of no calendar', () => {
  for (const [name, query] of [
    ['February 30th', { from: '2026-02-30T00:00:00Z' }],
    ['February 29th of a common year', { from: '2025-02-29T00:00:00Z' }],
    ['month 13', { to: '2026-13-01T00:00:00Z' }],
    ['day 0', { to: '2026-06-00T00:00:00Z' }],
  ] as const) {
    it(`refuses ${name}, in the bucketed and the raw range alike`, () => {
      const path = 'from' in query ? '/from' : '/to';
      expect(refusal(() => resolveRange(query, NOW))).toEqual({ status: 400, code: 'validation_failed', path });
      expect(refusal(() => rawRange(query, NOW))).toEqual({ status: 400, code: 'validation_failed', path });
    });
  }

  it('refuses a time Date.parse cannot read (a leap second, which the date-time format admits), in both ranges; an empty value is none in the raw range', () => {
    const query = { from: '2026-06-30T23:59:60Z' };
    expect(refusal(() => resolveRange(query, NOW))).toEqual({ status: 400, code: 'validation_failed', path: '/from' });
    expect(refusal(() => rawRange(query, NOW))).toEqual({ status: 400, code: 'validation_failed', path: '/from' });
    expect(rawRange({ from: '', to: '' }, NOW)).toEqual(rawRange({}, NOW));
  });

  it('takes a leap day, and dates written with an offset', () => {
    expect(resolveRange({ from: '2024-02-29T00:00:00Z', to: '2024-03-01T00:00:00Z' }, NOW).from.toISOString()).toBe('2024-02-29T00:00:00.000Z');
    expect(rawRange({ from: '2026-11-30T23:00:00-02:00', to: '2026-12-01T12:00:00+01:00' }, NOW)).toEqual({ from: Date.UTC(2026, 11, 1, 1), to: Date.UTC(2026, 11, 1, 11) });
  });
});
