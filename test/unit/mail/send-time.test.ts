// Resend's send times (src/mail/emails/send-time.ts): ISO 8601, and the English it takes, in UTC.
import { describe, expect, it } from 'vitest';
import { parseSendTime } from '../../../src/mail/emails/send-time.ts';

// A Wednesday, 14:30 UTC.
const now = new Date('2026-03-04T14:30:00.000Z');
const at = (text: string) => parseSendTime(text, now)?.toISOString();

describe('parseSendTime', () => {
  it('takes ISO 8601 with an offset as it is', () => {
    expect(at('2030-01-02T03:04:05+02:00')).toBe('2030-01-02T01:04:05.000Z');
  });

  it('reads "in <n> <unit>" from now', () => {
    expect(at('in 1 hour')).toBe('2026-03-04T15:30:00.000Z');
    expect(at('in 1 min')).toBe('2026-03-04T14:31:00.000Z');
    expect(at('In  30 Minutes')).toBe('2026-03-04T15:00:00.000Z');
    expect(at('in a day')).toBe('2026-03-05T14:30:00.000Z');
    expect(at('in 2 weeks')).toBe('2026-03-18T14:30:00.000Z');
    expect(at('now')).toBe('2026-03-04T14:30:00.000Z');
  });

  it('reads days and clock times in UTC', () => {
    expect(at('tomorrow at 9am')).toBe('2026-03-05T09:00:00.000Z');
    expect(at('tomorrow at 9:30 pm')).toBe('2026-03-05T21:30:00.000Z');
    expect(at('tomorrow')).toBe('2026-03-05T00:00:00.000Z');
    expect(at('today at 17:00')).toBe('2026-03-04T17:00:00.000Z');
    expect(at('today at noon')).toBe('2026-03-04T12:00:00.000Z');
    expect(at('tonight')).toBe('2026-03-04T20:00:00.000Z');
    expect(at('friday at 8am')).toBe('2026-03-06T08:00:00.000Z');
    // The same weekday as today is a week on.
    expect(at('next wednesday at midnight')).toBe('2026-03-11T00:00:00.000Z');
  });

  it('answers undefined for anything else', () => {
    for (const text of ['whenever', 'tomorrow at 9', 'tomorrow at 13pm', 'in -1 hour', 'in 1 fortnight', '2031-01-01', '2031-01-01T10:00:00', 'at 9am', '']) {
      expect(at(text), text).toBeUndefined();
    }
  });

  it('answers undefined for a time past year 9999 rather than an invalid Date', () => {
    for (const text of ['in 999999 weeks', '9999-12-31T23:59:59-05:00', '+275760-09-13T00:00:00Z']) {
      expect(at(text), text).toBeUndefined();
    }
    expect(at('9999-12-31T23:59:59Z')).toBe('9999-12-31T23:59:59.000Z');
    // Far but within year 9999: still a time.
    expect(at('in 999999 days')).toBe('4764-01-29T14:30:00.000Z');
  });
});
