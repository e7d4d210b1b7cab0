// A send time as Resend takes it (`scheduled_at`): ISO 8601 with an offset, or a
// few words of English, read in UTC:
//   now | in <n> <unit> (n a number, "a", "an" or "one"; unit second, minute
//   or min, hour, day, week, singular or plural)
//   today | tonight | tomorrow | [next] <weekday>, optionally "at <time>"
//   <time>: 9am, 9:30 pm, 17:00, noon, midnight (without a time: 00:00, but
//   today without a time is now)
// Anything else is undefined: the caller refuses it. ISO times keep their offset.
import { isDateTime } from '../../platform/http/validation.ts';

const UNITS: Record<string, number> = { second: 1_000, sec: 1_000, minute: 60_000, min: 60_000, hour: 3_600_000, hr: 3_600_000, day: 86_400_000, week: 604_800_000 };
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const WORD_NUMBERS: Record<string, number> = { a: 1, an: 1, one: 1, two: 2, three: 3, five: 5, ten: 10 };

/** Minutes after midnight of a clock time, or undefined. */
function clock(text: string): number | undefined {
  if (text === 'noon') return 12 * 60;
  if (text === 'midnight') return 0;
  const m = /^(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$/.exec(text);
  if (!m) return undefined;
  let hour = Number(m[1]);
  const minute = m[2] === undefined ? 0 : Number(m[2]);
  if (minute > 59) return undefined;
  if (m[3]) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (m[3] === 'pm' ? 12 : 0);
  } else if (hour > 23 || m[2] === undefined) {
    // A bare "at 9" is ambiguous: ask for 9am, 9pm or 09:00.
    return undefined;
  }
  return hour * 60 + minute;
}

// The last instant of year 9999: later times (e.g. "in 999999 days") are refused, since
// an invalid or far Date breaks toISOString and Postgres (22007) instead of a 4xx.
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** The time `text` names, seen from `now`; undefined when it names none or one past year 9999. */
export function parseSendTime(text: string, now: Date = new Date()): Date | undefined {
  const time = readSendTime(text, now);
  if (time === undefined) return undefined;
  const ms = time.getTime();
  return Number.isFinite(ms) && ms <= LATEST ? time : undefined;
}

function readSendTime(text: string, now: Date): Date | undefined {
  if (isDateTime(text)) return new Date(text);
  const words = text.trim().toLowerCase().replace(/\s+/g, ' ');
  if (words === 'now') return now;
  const relative = /^in (\d{1,6}|a|an|one|two|three|five|ten) (second|sec|minute|min|hour|hr|day|week)s?$/.exec(words);
  if (relative) {
    const n = WORD_NUMBERS[relative[1]!] ?? Number(relative[1]);
    return new Date(now.getTime() + n * UNITS[relative[2]!]!);
  }
  const day = /^(today|tonight|tomorrow|(?:next )?(?:sunday|monday|tuesday|wednesday|thursday|friday|saturday))(?: at (.+))?$/.exec(words);
  if (!day) return undefined;
  const minutes = day[2] === undefined ? undefined : clock(day[2]);
  if (day[2] !== undefined && minutes === undefined) return undefined;
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  let offsetDays: number;
  if (day[1] === 'today' || day[1] === 'tonight') {
    if (minutes === undefined) return day[1] === 'today' ? now : new Date(midnight + 20 * 3_600_000);
    offsetDays = 0;
  } else if (day[1] === 'tomorrow') {
    offsetDays = 1;
  } else {
    const target = WEEKDAYS.indexOf(day[1]!.replace('next ', ''));
    // The next such day after today (a week on when it is today).
    offsetDays = ((target - now.getUTCDay() + 7) % 7) || 7;
  }
  return new Date(midnight + offsetDays * 86_400_000 + (minutes ?? 0) * 60_000);
}
