// A sliding-window limit kept in Redis, shared by every ingress instance:
// at most `limit` events in any `windowMs`. Each admitted event is a member of
// a sorted set scored by Redis's own clock (so instances with skewed clocks
// agree); refused events are not recorded, so a client that backs off gets in.
// Unlike a fixed window, it never admits 2×limit across a window boundary.
import { randomUUID } from 'node:crypto';
import type { Redis } from '../redis.ts';

// KEYS[1] = set; ARGV = windowMs, limit, member, mode ('hit' records when under the limit, 'peek' only reads).
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local admitted = 0
if ARGV[4] == 'hit' and count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  count = count + 1
  admitted = 1
elseif ARGV[4] == 'peek' and count < limit then
  admitted = 1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local resetAt = now + window
if oldest[2] then resetAt = tonumber(oldest[2]) + window end
return { admitted, count, resetAt, now }
`;

export interface LimitDecision {
  allowed: boolean;
  /** The recorded event (for undo), when one was recorded. */
  member?: string;
  limit: number;
  remaining: number;
  /** When the oldest counted event leaves the window (epoch ms): a slot frees then. */
  resetAtMs: number;
  /** Seconds a refused client should wait. */
  retryAfterSeconds: number;
}

type WithScript = Redis & { slidingWindow(key: string, windowMs: number, limit: number, member: string, mode: string): Promise<number[]> };

export class SlidingWindowLimiter {
  private readonly redis: WithScript;

  constructor(
    redis: Redis,
    private readonly name: string,
    readonly limit: number,
    readonly windowMs: number,
  ) {
    // defineCommand sends the script once and then calls it by its SHA.
    if (!('slidingWindow' in redis)) redis.defineCommand('slidingWindow', { numberOfKeys: 1, lua: SCRIPT });
    this.redis = redis as WithScript;
  }

  /** Counts one event for `subject` if it is under the limit. */
  hit(subject: string, limit = this.limit): Promise<LimitDecision> {
    return this.run(subject, 'hit', limit);
  }

  /** Tells whether one more event would be admitted, without counting it. */
  peek(subject: string, limit = this.limit): Promise<LimitDecision> {
    return this.run(subject, 'peek', limit);
  }

  /** Removes an event recorded by hit (an attempt that turned out not to count, e.g. a successful login). */
  async undo(subject: string, member: string): Promise<void> {
    await this.redis.zrem(`limit:${this.name}:${subject}`, member);
  }

  private async run(subject: string, mode: 'hit' | 'peek', limit: number): Promise<LimitDecision> {
    const key = `limit:${this.name}:${subject}`;
    const member = randomUUID();
    const [admitted, count, resetAt, now] = await this.redis.slidingWindow(key, this.windowMs, limit, member, mode);
    const allowed = admitted === 1;
    return {
      allowed,
      ...(allowed && mode === 'hit' ? { member } : {}),
      limit,
      remaining: Math.max(0, limit - count!),
      resetAtMs: resetAt!,
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((resetAt! - now!) / 1000)),
    };
  }
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
