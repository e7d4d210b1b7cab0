// A sliding-window limit kept in Redis, shared by every ingress instance:
// at most `limit` events in any `windowMs`. Each admitted event is a member of
// a sorted set scored by Redis's own clock (so instances with skewed clocks
// agree); refused events are not recorded, so a client that backs off gets in.
// Unlike a fixed window, it never admits 2×limit across a window boundary.
// Checks made in the same turn of the event loop share one script call.
import { randomUUID } from 'node:crypto';
import type { Redis } from '../redis.ts';

// One call decides many checks, in order: KEYS = the sets; ARGV[1] = windowMs,
// then per key: mode ('hit' records when under the limit, 'peek' only reads),
// limit, member. Returns per key: admitted, count, resetAt; then Redis's now.
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local out = {}
for i, key in ipairs(KEYS) do
  local mode = ARGV[3 * i - 1]
  local limit = tonumber(ARGV[3 * i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)
  local admitted = 0
  if mode == 'hit' and count < limit then
    redis.call('ZADD', key, now, ARGV[3 * i + 1])
    redis.call('PEXPIRE', key, window)
    count = count + 1
    admitted = 1
  elseif mode == 'peek' and count < limit then
    admitted = 1
  end
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  local resetAt = now + window
  if oldest[2] then resetAt = tonumber(oldest[2]) + window end
  out[#out + 1] = admitted
  out[#out + 1] = count
  out[#out + 1] = resetAt
end
out[#out + 1] = now
return out
`;

/** Checks sent in one script call at most (a busy ingress gathers more than this within a tick only under extreme load). */
const MAX_BATCH = 256;

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the oldest counted event leaves the window (epoch ms): a slot frees then. */
  resetAtMs: number;
  /** Seconds a refused client should wait. */
  retryAfterSeconds: number;
}

type WithScript = Redis & { slidingWindows(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number[]> };

interface Check {
  key: string;
  mode: 'hit' | 'peek';
  limit: number;
  member: string;
  resolve: (decision: LimitDecision) => void;
  reject: (err: unknown) => void;
}

// Members only need to be unique within a set: a per-process prefix and a counter are enough, and cheaper than UUIDs.
const memberPrefix = randomUUID().slice(0, 8);
let memberSeq = 0;

export class SlidingWindowLimiter {
  private readonly name: string;
  readonly limit: number;
  readonly windowMs: number;
  private readonly redis: WithScript;
  private pending: Check[] = [];
  private flushScheduled = false;

  constructor(
    redis: Redis,
    name: string,
    limit: number,
    windowMs: number,
  ) {
    this.name = name;
    this.limit = limit;
    this.windowMs = windowMs;
    // defineCommand sends the script once and then calls it by its SHA.
    if (!('slidingWindows' in redis)) redis.defineCommand('slidingWindows', { lua: SCRIPT });
    this.redis = redis as WithScript;
  }

  /** Counts one event for `subject` if it is under the limit. */
  hit(subject: string, limit = this.limit): Promise<LimitDecision> {
    return this.check(subject, 'hit', limit);
  }

  /** Tells whether one more event would be admitted, without counting it. */
  peek(subject: string, limit = this.limit): Promise<LimitDecision> {
    return this.check(subject, 'peek', limit);
  }

  /**
   * Queues the check; the checks gathered during one turn of the event loop go to Redis in one
   * script call (on the hot redirect path this is one round trip for many requests, not one each).
   * The script runs them in order, atomically, so the answers are those of one call per check.
   */
  private check(subject: string, mode: 'hit' | 'peek', limit: number): Promise<LimitDecision> {
    return new Promise((resolve, reject) => {
      this.pending.push({ key: `limit:${this.name}:${subject}`, mode, limit, member: `${memberPrefix}:${++memberSeq}`, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    while (this.pending.length > 0) void this.send(this.pending.splice(0, MAX_BATCH));
  }

  private async send(checks: Check[]): Promise<void> {
    let reply: number[];
    try {
      const args: (string | number)[] = [this.windowMs];
      for (const c of checks) args.push(c.mode, c.limit, c.member);
      reply = await this.redis.slidingWindows(checks.length, ...checks.map((c) => c.key), ...args);
    } catch (err) {
      for (const c of checks) c.reject(err);
      return;
    }
    const now = reply[reply.length - 1]!;
    checks.forEach((c, i) => {
      const [admitted, count, resetAt] = [reply[3 * i]!, reply[3 * i + 1]!, reply[3 * i + 2]!];
      c.resolve(limitDecision(admitted === 1, c.limit, count, resetAt, now));
    });
  }
}
/** A decision from what a limit script reported: the count after it, when a slot frees, and Redis's clock. */
export function limitDecision(allowed: boolean, limit: number, count: number, resetAtMs: number, nowMs: number): LimitDecision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - count),
    resetAtMs,
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((resetAtMs - nowMs) / 1000)),
  };
}

/**
 * What a limit reports when its store cannot be asked (Redis away, the request let through):
 * the configured limit, nothing used, a window starting now.
 */
export function fullAllowance(limit: number, windowMs: number): LimitDecision {
  const now = Date.now();
  return limitDecision(true, limit, 0, now + windowMs, now);
}

/** The standard headers for a decision: X-RateLimit-Limit, -Remaining, -Reset (epoch seconds), and Retry-After when refused. */
export function rateLimitHeaders(decision: LimitDecision): Record<string, string> {
  const headers: Record<string, string> = {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(Math.ceil(decision.resetAtMs / 1000)),
  };
  if (!decision.allowed) headers['retry-after'] = String(decision.retryAfterSeconds);
  return headers;
}
