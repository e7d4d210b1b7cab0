// A shared per-subject limit for the hot redirect path: at most `limit` events
// in any window, counted in Redis across every ingress, without making each
// request wait for Redis.
//
// Each process keeps, per subject, the shared count Redis last reported plus
// its own events not yet sent. An event is admitted at once (admitLocally) while
// that sum stays more than `headroom` below the limit and fewer than `headroom`
// events wait to be sent; it is counted in Redis by the next script call (all
// the counts gathered in one event-loop turn go out in one call). Otherwise
// Redis decides the event itself (hit), in order and atomically, so near the
// limit the 61st redirect of a minute is refused exactly.
//
// How far over can it go? Redis always hears of an admitted event within one
// round trip, and no process admits more than `headroom` events that Redis has
// not confirmed. So the limit is exceeded only when one subject's events reach
// several instances within the same round trip, and then by at most `headroom`
// (limit / 12, rounded up: 5 for 60 a minute) per other instance. Sequential
// traffic (each event after the previous one's answer, as a client's requests
// are), however it is spread over instances, is counted exactly.
//
// Redis keeps a hash per subject: one field per second of Redis's clock with
// that second's count, so memory stays small however high the limit. A second
// is counted until it is wholly out of the window (up to 1 s longer than the
// window: never more events than the limit in any window, as with the exact
// limiter); refused events are not counted.
import type { Redis } from '../redis.ts';
import type { LimitDecision } from './sliding-window.ts';

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
  local admitted = 0
  while admitted < decide and count + add + admitted < limit do admitted = admitted + 1 end
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

type WithScript = Redis & { bufferedWindows(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number[]> };

interface Subject {
  /** The shared count Redis reported last (0 before the first report). */
  known: number;
  /** Events admitted here and not yet sent to Redis. */
  unsent: number;
  /** Events admitted here, sent, and not yet confirmed by Redis. */
  inFlight: number;
  /** Events waiting for Redis's decision, in arrival order. */
  waiting: { resolve: (d: LimitDecision) => void; reject: (err: unknown) => void }[];
}

export interface BufferedSlidingWindowOptions {
  /** How close to the limit (in events) a subject is decided by Redis rather than here. */
  headroom?: number;
}

export class BufferedSlidingWindow {
  private readonly redis: WithScript;
  // Subjects seen in this window and in the one before; a subject unseen for a whole window has
  // nothing left in it and is dropped with its generation (no sweep over millions of addresses).
  private current = new Map<string, Subject>();
  private previous = new Map<string, Subject>();
  private generationEndsAt: number;
  private readonly dirty = new Map<string, Subject>();
  private flushScheduled = false;
  private readonly headroom: number;
  private readonly windowSeconds: number;

  constructor(
    redis: Redis,
    private readonly name: string,
    readonly limit: number,
    readonly windowMs: number,
    options: BufferedSlidingWindowOptions = {},
  ) {
    if (!('bufferedWindows' in redis)) redis.defineCommand('bufferedWindows', { lua: SCRIPT });
    this.redis = redis as WithScript;
    this.headroom = options.headroom ?? Math.ceil(limit / 12);
    this.windowSeconds = Math.ceil(windowMs / 1000);
    this.generationEndsAt = Date.now() + windowMs;
  }

  private subject(name: string): Subject {
    const now = Date.now();
    if (now >= this.generationEndsAt) {
      this.previous = this.current;
      this.current = new Map();
      this.generationEndsAt = now + this.windowMs;
    }
    let s = this.current.get(name);
    if (s) return s;
    s = this.previous.get(name) ?? { known: 0, unsent: 0, inFlight: 0, waiting: [] };
    this.current.set(name, s);
    return s;
  }

  /** Admits the event here and now if the subject is far enough below the limit; false: ask Redis (hit). */
  admitLocally(subject: string): boolean {
    const s = this.subject(subject);
    // Events already waiting for Redis go first: this one must not overtake them.
    const unconfirmed = s.unsent + s.inFlight;
    if (s.waiting.length > 0 || unconfirmed >= this.headroom || s.known + unconfirmed + 1 > this.limit - this.headroom) return false;
    s.unsent++;
    this.schedule(subject, s);
    return true;
  }

  /** Redis decides this event (with the subject's unsent events counted first). */
  hit(subject: string): Promise<LimitDecision> {
    return new Promise((resolve, reject) => {
      const s = this.subject(subject);
      s.waiting.push({ resolve, reject });
      this.schedule(subject, s);
    });
  }

  private schedule(name: string, s: Subject): void {
    this.dirty.set(name, s);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const entries = [...this.dirty];
    this.dirty.clear();
    for (let i = 0; i < entries.length; i += MAX_BATCH) void this.send(entries.slice(i, i + MAX_BATCH));
  }

  private async send(entries: [string, Subject][]): Promise<void> {
    const batch = entries.map(([name, s]) => {
      const sent = { name, s, unsent: s.unsent, waiting: s.waiting };
      s.inFlight += s.unsent;
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
      // Redis away: the admitted events are sent again with the next call; those waiting learn of it (fail-open is the caller's rule).
      for (const b of batch) {
        b.s.inFlight -= b.unsent;
        b.s.unsent += b.unsent;
        for (const w of b.waiting) w.reject(err);
      }
      return;
    }
    const now = reply[reply.length - 1]!;
    batch.forEach((b, i) => {
      const [admitted, count, resetAt] = [reply[3 * i]!, reply[3 * i + 1]!, reply[3 * i + 2]!];
      b.s.known = count;
      b.s.inFlight -= b.unsent;
      b.waiting.forEach((w, k) => {
        const allowed = k < admitted;
        w.resolve({
          allowed,
          limit: this.limit,
          remaining: Math.max(0, this.limit - count),
          resetAtMs: resetAt,
          retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((resetAt - now) / 1000)),
        });
      });
    });
  }
}
