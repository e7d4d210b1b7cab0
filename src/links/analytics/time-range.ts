// The time range and buckets of an analytics query, whole hours in UTC:
// `from` is rounded down and `to` up to the hour, the resolution of the rollups.
import { ApiError } from '../../platform/http/errors.ts';
import { SqlFragment } from '../../platform/clickhouse/literal.ts';
import type { Interval } from './analytics-schemas.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
export const MAX_RANGE_DAYS = 400;
export const MAX_BUCKETS = 1000;

export interface TimeRange {
  from: Date;
  to: Date;
  interval: Interval;
}

const floorHour = (ms: number) => Math.floor(ms / HOUR) * HOUR;
const ceilHour = (ms: number) => Math.ceil(ms / HOUR) * HOUR;

const DATE_PART = /^(\d{4})-(\d{2})-(\d{2})/;

/**
 * Refuses a date that is no day of the calendar (2024-13-45, 0000-00-00, 2024-02-30): Date.parse reads
 * the last as March 1, and a format check may let it through.
 */
export function checkCalendarDate(value: string | undefined, name: 'from' | 'to'): void {
  const m = value === undefined ? null : DATE_PART.exec(value);
  if (!m) return;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const d = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC maps years 0–99 to 1900–1999: set the year again.
  d.setUTCFullYear(year);
  if (month < 1 || month > 12 || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) {
    throw new ApiError(400, 'validation_failed', `${name} is not a date of the calendar.`, [{ path: `/${name}`, message: 'no such date' }]);
  }
}

function parse(value: string | undefined, name: 'from' | 'to', fallback: number): number {
  if (value === undefined) return fallback;
  checkCalendarDate(value, name);
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new ApiError(400, 'validation_failed', `${name} is not a date-time.`, [{ path: `/${name}`, message: 'must be ISO 8601' }]);
  return ms;
}

/** Start of the bucket that holds `ms` (UTC; weeks start on Monday). */
export function bucketStart(ms: number, interval: Interval): number {
  const d = new Date(ms);
  switch (interval) {
    case 'hour': return floorHour(ms);
    case 'day': return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    case 'week': {
      const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
      return day - ((d.getUTCDay() + 6) % 7) * DAY;
    }
    case 'month': return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
}

export function nextBucket(ms: number, interval: Interval): number {
  const d = new Date(ms);
  switch (interval) {
    case 'hour': return ms + HOUR;
    case 'day': return ms + DAY;
    case 'week': return ms + 7 * DAY;
    case 'month': return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  }
}

/** Every bucket start of the range, so the series has zeros where nothing happened. */
export function bucketStarts(range: TimeRange): number[] {
  const out: number[] = [];
  for (let t = bucketStart(range.from.getTime(), range.interval); t < range.to.getTime(); t = nextBucket(t, range.interval)) out.push(t);
  return out;
}

/** ClickHouse DateTime holds 1970 to 2105; a range outside it is the caller's mistake. */
export const LATEST_TIME = Date.UTC(2105, 11, 31);

export function checkStorableRange(from: number, to: number): void {
  if (from < 0 || to > LATEST_TIME) {
    throw new ApiError(400, 'invalid_range', 'Dates must lie between 1970 and 2105.', [{ path: from < 0 ? '/from' : '/to', message: 'out of range' }]);
  }
  if (from >= to) throw new ApiError(400, 'invalid_range', '`from` must be before `to`.', [{ path: '/from', message: 'must be before to' }]);
}

/**
 * The range of the export and the funnel, which read scans to the second: as given, or the 30 days
 * up to the end of the current second, so that a scan recorded a moment ago is in it (ts < to).
 */
export function rawRange(query: { from?: string; to?: string }, now = Date.now()): { from: number; to: number } {
  // An empty value is no value here, as it always was.
  const to = parse(query.to || undefined, 'to', Math.floor(now / 1000) * 1000 + 1000);
  const from = parse(query.from || undefined, 'from', to - 30 * DAY);
  checkStorableRange(from, to);
  return { from, to };
}

export function resolveRange(query: { from?: string; to?: string; interval?: Interval }, now = Date.now()): TimeRange {
  const to = ceilHour(parse(query.to, 'to', now));
  const from = floorHour(parse(query.from, 'from', to - 30 * DAY));
  checkStorableRange(from, to);
  if (to - from > MAX_RANGE_DAYS * DAY) throw new ApiError(400, 'invalid_range', `The range may span at most ${MAX_RANGE_DAYS} days.`, [{ path: '/from', message: 'range too long' }]);
  const span = to - from;
  const interval: Interval = query.interval ?? (span <= 2 * DAY ? 'hour' : span <= 92 * DAY ? 'day' : 'week');
  const range = { from: new Date(from), to: new Date(to), interval };
  if (bucketStarts(range).length > MAX_BUCKETS) {
    throw new ApiError(400, 'too_many_buckets', `More than ${MAX_BUCKETS} ${interval} buckets; choose a coarser interval or a shorter range.`, [{ path: '/interval', message: 'too fine for the range' }]);
  }
  return range;
}

/** ClickHouse expression of the bucket start of a DateTime column. */
export function bucketSql(column: 'hour' | 'day' | 'ts', interval: Interval): SqlFragment {
  const col = ({ hour: 'hour', day: 'day', ts: 'ts' } as const)[column];
  switch (interval) {
    case 'hour': return new SqlFragment(`toStartOfHour(${col})`);
    case 'day': return new SqlFragment(`toStartOfDay(${col})`);
    case 'week': return new SqlFragment(`toDateTime(toMonday(${col}))`);
    case 'month': return new SqlFragment(`toDateTime(toStartOfMonth(${col}))`);
  }
}
