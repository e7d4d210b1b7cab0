// A shared per-subject limit for the hot redirect path: at most `limit` events
// in any window, counted in Redis across every ingress, without making each
// request wait for Redis.
//
// Each process keeps, per subject, the shared count Redis last reported plus
// its own events Redis has not confirmed yet. An event is admitted at once
// (admitLocally) while that sum stays more than `headroom` below the limit and
// few enough of its own events wait for confirmation (`headroom` of them while
// the count is fresh, one when this process has not heard of the subject for
// FRESH_MS); it is counted in Redis by the next script call. Otherwise Redis
// decides the event itself (hit), atomically and after every earlier event of
// the subject, so near the limit the 61st redirect of a minute is refused exactly.
//
// When do counts go to Redis? In one call for every subject, at the end of the
// event-loop turn, except while all of them are below half their limit: then
// at most about every SEND_INTERVAL_MS. Under load, at half the ingress's
// maximum rate, a call per turn meant a script call for 13–15% of all
// redirects; every 5 ms, 4% there and 1% at full rate, and Redis's CPU per
// redirect about halved (issue 34); every 20 ms (as often as the scan journal is
// written), Redis's CPU per redirect fell again from about 2 µs to 1 (issue 52:
// a busy address's hash holds a field per second, which each call reads).
// A subject from half its limit on, and an event that waits for Redis's
// decision, go at the end of the turn, as before: a client
// nearing its limit is counted as promptly as it always was. A process that
// stops may leave the counts of its last 20 ms unsent (as it leaves the scans of
// its last journal flush unwritten): those few redirects are not counted.
//
// How far over can it go? One process alone never passes the limit: its own
// count is always current. With several, a process may admit events on a count
// that others have since raised: at most `headroom` (limit / 12, rounded up: 5
// for 60 a minute) per process at a time, and at most 1 when that process had
// not seen the subject within FRESH_MS. A client whose requests alternate
// between instances is counted exactly (tested); one that has used up its
// minute on instance B can get one more redirect from instance A, which last
// saw it long ago.
//
// Redis keeps a hash per subject: one field per second of Redis's clock with
// that second's count, so memory stays small however high the limit. A second
// is counted until it is wholly out of the window (up to 1 s longer than the
// window); refused events are not counted.
import type { Redis } from '../redis.ts';
import { limitDecision, type LimitDecision } from './sliding-window.ts';

// KEYS = the subjects' hashes; ARGV[1] = window in seconds, then per key:
// events already admitted here (always counted), events to decide, limit.
// Returns per key: how many of the events to decide were admitted, the count, resetAt (ms); then now (ms).
const SCRIPT = `
local t = redis.call('TIME')
local sec = tonumber(t[1])
local now = sec * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local out = {}
for i, key in ipairs(KEYS) do
  local add = tonumber(ARGV[3 * i - 1])
  local decide = tonumber(ARGV[3 * i])
  local limit = tonumber(ARGV[3 * i + 1])
  local fields = redis.call('HGETALL', key)
  local count = 0
  local oldest = nil
  local stale = {}
  for f = 1, #fields, 2 do
    local second = tonumber(fields[f])
    if second < sec - window then
      stale[#stale + 1] = fields[f]
    else
      count = count + tonumber(fields[f + 1])
      if oldest == nil or second < oldest then oldest = second end
    end
  end
  if #stale > 0 then redis.call('HDEL', key, unpack(stale)) end
  local admitted = math.max(0, math.min(decide, limit - count - add))
  local n = add + admitted
  if n > 0 then
    redis.call('HINCRBY', key, sec, n)
    redis.call('EXPIRE', key, window + 2)
    count = count + n
    if oldest == nil then oldest = sec end
  end
  local resetAt = now + window * 1000
  if oldest ~= nil then resetAt = (oldest + window + 1) * 1000 end
  out[#out + 1] = admitted
  out[#out + 1] = count
  out[#out + 1] = resetAt
end
out[#out + 1] = now
return out
`;

/** Subjects sent in one script call at most. */
const MAX_BATCH = 256;
/** A count learned longer ago than this may be out of date: admit at most one event on it before Redis answers. */
const FRESH_MS = 1000;
/** By default, admitted events of subjects below half their limit are sent about this often at most: a few hundred calls a second per busy process instead of one per event-loop turn. */
const SEND_INTERVAL_MS = 20;
/** Subjects remembered at most (an address flood must not grow memory without bound); past it the oldest generation goes. */
const MAX_SUBJECTS = 200_000;

type WithScript = Redis & { bufferedWindows(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number[]> };

interface Subject {
  /** The shared count Redis reported last (0 before the first report), and when (ms, 0: never). */
  known: number;
  knownAt: number;
  /** Events admitted here and not yet sent to Redis. */
  unsent: number;
  /** Events admitted here, sent, and not yet confirmed by Redis. */
  inFlight: number;
  /** Events waiting for Redis's decision, in arrival order, not yet sent. */
  waiting: { resolve: (d: LimitDecision) => void; reject: (err: unknown) => void }[];
  /** Events sent for Redis's decision whose answer has not come back. */
  deciding: number;
}

export interface BufferedSlidingWindowOptions {
  /** How close to the limit (in events) a subject is decided by Redis rather than here. */
  headroom?: number;
  /** How often at most admitted events of subjects below half their limit go to Redis (default SEND_INTERVAL_MS). */
  sendIntervalMs?: number;
}

export class BufferedSlidingWindow {
  private readonly name: string;
  readonly limit: number;
  readonly windowMs: number;
  private readonly redis: WithScript;
  // Subjects seen in this window and in the one before; a subject unseen for a whole window has
  // nothing left in it and is dropped with its generation (no sweep over millions of addresses).
  private current = new Map<string, Subject>();
  private previous = new Map<string, Subject>();
  private generationEndsAt: number;
  private readonly dirty = new Map<string, Subject>();
  private flushScheduled = false;
  /** The pending send when it waits for the send interval (undefined when it runs at the end of this turn). */
  private flushTimer: NodeJS.Timeout | undefined;
  /** When the last call went (performance.now()). */
  private lastSendAt = -Infinity;
  private readonly headroom: number;
  private readonly sendIntervalMs: number;
  private readonly windowSeconds: number;

  constructor(
    redis: Redis,
    name: string,
    limit: number,
    windowMs: number,
    options: BufferedSlidingWindowOptions = {},
  ) {
    this.name = name;
    this.limit = limit;
    this.windowMs = windowMs;
    if (!('bufferedWindows' in redis)) redis.defineCommand('bufferedWindows', { lua: SCRIPT });
    this.redis = redis as WithScript;
    this.headroom = options.headroom ?? Math.ceil(limit / 12);
    this.sendIntervalMs = options.sendIntervalMs ?? SEND_INTERVAL_MS;
    this.windowSeconds = Math.ceil(windowMs / 1000);
    this.generationEndsAt = Date.now() + windowMs;
  }

  private subject(name: string, now: number): Subject {
    if (now >= this.generationEndsAt || this.current.size >= MAX_SUBJECTS) {
      this.previous = this.current;
      this.current = new Map();
      this.generationEndsAt = now + this.windowMs;
    }
    let s = this.current.get(name);
    if (s) return s;
    s = this.previous.get(name) ?? { known: 0, knownAt: 0, unsent: 0, inFlight: 0, waiting: [], deciding: 0 };
    this.current.set(name, s);
    return s;
  }

  /** Admits the event here and now if the subject is far enough below the limit; false: ask Redis (hit). */
  admitLocally(subject: string): boolean {
    const now = Date.now();
    const s = this.subject(subject, now);
    // Events waiting for Redis's decision go first: this one must not overtake them.
    if (s.waiting.length > 0 || s.deciding > 0) return false;
    const unconfirmed = s.unsent + s.inFlight;
    const mayAdmit = now - s.knownAt <= FRESH_MS ? this.headroom : 1;
    if (unconfirmed >= mayAdmit || s.known + unconfirmed + 1 > this.limit - this.headroom) return false;
    s.unsent++;
    this.schedule(subject, s, s.known + s.unsent + s.inFlight >= this.limit / 2);
    return true;
  }

  /** Redis decides this event (with the subject's unsent events counted first). */
  hit(subject: string): Promise<LimitDecision> {
    return new Promise((resolve, reject) => {
      const s = this.subject(subject, Date.now());
      s.waiting.push({ resolve, reject });
      this.schedule(subject, s, true);
    });
  }

  /** Sends the subject's count with the next call; `atTurnEnd`: that call goes at the end of this turn, whenever the last one went. */
  private schedule(name: string, s: Subject, atTurnEnd: boolean): void {
    this.dirty.set(name, s);
    if (this.flushScheduled && (this.flushTimer === undefined || !atTurnEnd)) return;
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.flushScheduled = true;
    // A monotonic clock: a wall clock set back must not hold the counts.
    const wait = this.lastSendAt + this.sendIntervalMs - performance.now();
    if (atTurnEnd || wait <= 0) setImmediate(() => this.flush());
    else this.flushTimer = setTimeout(() => this.flush(), wait);
  }

  private flush(): void {
    this.flushScheduled = false;
    this.flushTimer = undefined;
    this.lastSendAt = performance.now();
    const entries = [...this.dirty];
    this.dirty.clear();
    for (let i = 0; i < entries.length; i += MAX_BATCH) void this.send(entries.slice(i, i + MAX_BATCH));
  }

  private async send(entries: [string, Subject][]): Promise<void> {
    const batch = entries.map(([name, s]) => {
      const sent = { name, s, unsent: s.unsent, waiting: s.waiting };
      s.inFlight += s.unsent;
      s.deciding += s.waiting.length;
      s.unsent = 0;
      s.waiting = [];
      return sent;
    });
    let reply: number[];
    try {
      const args: (string | number)[] = [this.windowSeconds];
      for (const b of batch) args.push(b.unsent, b.waiting.length, this.limit);
      reply = await this.redis.bufferedWindows(batch.length, ...batch.map((b) => `limit:${this.name}:${b.name}`), ...args);
    } catch (err) {
      // Redis away: the admitted events go again with the subject's next call (no retry loop against a
      // Redis that is down); those waiting learn of it (fail-open is the caller's rule).
      for (const b of batch) {
        b.s.inFlight -= b.unsent;
        b.s.deciding -= b.waiting.length;
        b.s.unsent += b.unsent;
        for (const w of b.waiting) w.reject(err);
      }
      return;
    }
    const now = reply[reply.length - 1]!;
    batch.forEach((b, i) => {
      const [admitted, count, resetAt] = [reply[3 * i]!, reply[3 * i + 1]!, reply[3 * i + 2]!];
      b.s.known = count;
      b.s.knownAt = Date.now();
      b.s.inFlight -= b.unsent;
      b.s.deciding -= b.waiting.length;
      b.waiting.forEach((w, k) => w.resolve(limitDecision(k < admitted, this.limit, count, resetAt, now)));
    });
  }
}
