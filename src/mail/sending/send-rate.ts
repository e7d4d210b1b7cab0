// The platform send rate: at most N hand-overs in any window of a second at the
// relay, across every sender process. Each hand-over holds a slot of a log kept
// in Redis (a sorted set on Redis's clock, so the senders' clocks do not matter,
// even moved by faketime) from before it starts until a second after it ended.
// A message reaches the relay between its slot's taking and its hand-over's end,
// so the (N+1)th message after it reaches the relay a second or more later: no
// second there holds N+1, whatever the hand-overs' durations.
import type { Redis } from '../../platform/redis.ts';

/** How long a slot stays held when its sender never says the hand-over ended (it died): beyond the SMTP timeouts. */
const HOLD_MS = 45_000;
const WINDOW_MS = 1000;

// KEYS[1] the log; ARGV: limit, member. A slot's score is when it frees: in flight, now + HOLD_MS.
// Returns 0 when a slot was taken, else the milliseconds until one frees.
const TAKE_SLOT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + ${HOLD_MS}, ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ${HOLD_MS + WINDOW_MS})
  return 0
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(first[2]) - now)
`;

// KEYS[1] the log; ARGV: member. The hand-over ended: its slot frees a second from now.
const END_SLOT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now + ${WINDOW_MS}, ARGV[1])
return 0
`;

/** How often a sender waiting for a slot asks again at most (slots freed by other processes are not announced). */
const POLL_MS = 50;

export class SendRate {
  private readonly redis: Redis;
  private readonly key: string;
  private readonly perSecond: number;
  private seq = 0;
  private readonly member = `${process.pid}-${Math.random().toString(36).slice(2)}`;

  constructor(
    redis: Redis,
    key: string,
    perSecond: number,
  ) {
    this.redis = redis;
    this.key = key;
    this.perSecond = perSecond;
  }

  /**
   * Waits for a slot and runs the hand-over in it; the slot frees a second after the hand-over
   * ended. Resolves `{ ran: false }` without running it when `stopped()` turns true first.
   */
  async within<T>(handOver: () => Promise<T>, stopped: () => boolean): Promise<{ ran: false } | { ran: true; result: T }> {
    const slot = `${this.member}-${this.seq++}`;
    for (;;) {
      if (stopped()) return { ran: false };
      const wait = Number(await this.redis.eval(TAKE_SLOT, 1, this.key, this.perSecond, slot));
      if (wait === 0) break;
      await new Promise((r) => setTimeout(r, Math.min(wait, POLL_MS)));
    }
    try {
      return { ran: true, result: await handOver() };
    } finally {
      // Unreachable Redis: the slot frees after HOLD_MS instead.
      await this.redis.eval(END_SLOT, 1, this.key, slot).catch(() => {});
    }
  }
}
