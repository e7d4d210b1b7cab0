// The range an analytics page shows, from its query string: a preset (the last
// 24 hours, 7, 30 or 90 days, up to now) or from/to dates, in hour or day
// buckets. Dates as a date input sends them (YYYY-MM-DD) are whole UTC days and
// `to` includes its day. The rules after that are the analytics API's
// (time-range.ts: whole hours, at most 400 days and 1000 buckets).
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../platform/http/errors.ts';
import { checkCalendarDate, resolveRange, type TimeRange } from '../analytics/time-range.ts';

export const PRESETS = { '24h': 1, '7d': 7, '30d': 30, '90d': 90 } as const;
export type Preset = keyof typeof PRESETS;
export const DEFAULT_PRESET: Preset = '7d';
const DAY = 86_400_000;

export const PageQuery = Type.Object({
  range: Type.Optional(Type.String({ maxLength: 10, description: `A preset: ${Object.keys(PRESETS).join(', ')} (up to now; default ${DEFAULT_PRESET}). Ignored when from or to is given.` })),
  from: Type.Optional(Type.String({ maxLength: 40, description: 'Start: a date (YYYY-MM-DD, UTC) or date-time. Default: 30 days before `to`.' })),
  to: Type.Optional(Type.String({ maxLength: 40, description: 'End: a date (that day included) or date-time. Default: now.' })),
  interval: Type.Optional(Type.String({ maxLength: 10, description: 'hour or day buckets. Default: hour up to 7 days, else day.' })),
});

export interface PageRange extends TimeRange {
  interval: 'hour' | 'day';
  /** The preset shown, when no dates were given. */
  preset?: Preset;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
export function pageRange(query: { range?: string; from?: string; to?: string; interval?: string }, now = Date.now()): PageRange {
  if (query.interval !== undefined && query.interval !== 'hour' && query.interval !== 'day') {
    throw new ApiError(400, 'validation_failed', 'interval must be hour or day.', [{ path: '/interval', message: 'must be hour or day' }]);
  }
  const interval = query.interval as 'hour' | 'day' | undefined;
  if (query.from === undefined && query.to === undefined) {
    const preset = (query.range ?? DEFAULT_PRESET) as Preset;
    if (!Object.hasOwn(PRESETS, preset)) throw new ApiError(400, 'validation_failed', `range must be one of ${Object.keys(PRESETS).join(', ')}.`, [{ path: '/range', message: 'unknown preset' }]);
    const days = PRESETS[preset];
    const range = resolveRange({ from: new Date(now - days * DAY).toISOString(), to: new Date(now).toISOString(), interval: interval ?? (days <= 7 ? 'hour' : 'day') }, now);
    return { ...range, interval: range.interval as 'hour' | 'day', preset };
  }
  checkCalendarDate(query.from, 'from');
  checkCalendarDate(query.to, 'to');
  const to = query.to !== undefined && DATE_ONLY.test(query.to) ? new Date(Date.parse(query.to) + DAY).toISOString() : query.to;
  const from = query.from;
  const guess = () => {
    const end = to === undefined ? now : Date.parse(to);
    const start = from === undefined ? end - 30 * DAY : Date.parse(from);
    return end - start <= 7 * DAY ? 'hour' : 'day';
  };
  const range = resolveRange({ ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}), interval: interval ?? guess() }, now);
  return { ...range, interval: range.interval as 'hour' | 'day' };
}
