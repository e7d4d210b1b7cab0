// A per-second request limit kept in Redis, shared by every ingress instance,
// with batch reservations (the mail API's per-key limit, spec "Requests per
// key" and "POST /emails/batch"):
//   - windows are whole seconds of Redis's own clock (TIME), so instances with
//     skewed clocks agree; a subject's count lives under a key that expires
//     after two seconds;
//   - `take` costs one token: admitted iff count + 1 <= cap; a refusal records nothing;
//   - `reserveBatch` reserves `tokens` before a batch's body is read: admitted iff
//     no batch was reserved for the subject in this window AND (the window is empty
//     OR count + tokens <= cap). So a batch starting in an empty second always
//     passes, whatever the cap, and only the first batch of a second is admitted;
//   - `refund` gives unused tokens back to the window they were taken from (never
//     below 0), and does nothing once that window has turned.
// Every decision is one script call, so it is exact under concurrency.
import type { Redis } from '../redis.ts';
import { limitDecision, type LimitDecision } from './sliding-window.ts';

// KEYS[1] = count key prefix, ARGV = op, cap, tokens, [window]. The window's hash holds
// `n` (tokens taken) and `b` (a batch was reserved). Returns admitted, count, window (s), now (ms).
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local op = ARGV[1]
local cap = tonumber(ARGV[2])
local tokens = tonumber(ARGV[3])
if op == 'refund' then
  local key = KEYS[1] .. ':' .. ARGV[4]
  if tonumber(ARGV[4]) == tonumber(t[1]) and redis.call('EXISTS', key) == 1 then
    local n = tonumber(redis.call('HGET', key, 'n') or '0')
    local back = math.min(tokens, n)
    redis.call('HINCRBY', key, 'n', -back)
    return {1, n - back, tonumber(t[1]), now}
  end
  return {0, 0, tonumber(t[1]), now}
end
local window = tonumber(t[1])
local key = KEYS[1] .. ':' .. window
local n = tonumber(redis.call('HGET', key, 'n') or '0')
local admitted = 0
if op == 'take' then
  if n + 1 <= cap then admitted = 1 end
else
  local batched = redis.call('HEXISTS', key, 'b') == 1
  if (not batched) and (n == 0 or n + tokens <= cap) then
    admitted = 1
    redis.call('HSET', key, 'b', 1)
  end
end
if admitted == 1 then
  n = n + tokens
  redis.call('HSET', key, 'n', n)
  redis.call('PEXPIRE', key, 2000)
end
return {admitted, n, window, now}
`;

type Reply = [admitted: number, count: number, window: number, nowMs: number];
type WithScript = Redis & { perSecondWindow(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<Reply> };

/** A batch's reservation: the window (Redis second) its tokens were taken from. */
export interface BatchReservation {
  subject: string;
  window: number;
}

export class PerSecondWindow {
  private readonly name: string;
  private readonly redis: WithScript;

  constructor(redis: Redis, name: string) {
    this.name = name;
    // defineCommand sends the script once and then calls it by its SHA.
    if (!('perSecondWindow' in redis)) redis.defineCommand('perSecondWindow', { lua: SCRIPT });
    this.redis = redis as WithScript;
  }

  /** One request of `subject`, under `cap` per second. */
  async take(subject: string, cap: number): Promise<LimitDecision> {
    const [admitted, count, window, now] = await this.call(subject, 'take', cap, 1);
    return this.decision(admitted === 1, cap, count, window, now);
  }

  /** Reserves `tokens` for a batch of `subject` (see the rules above); the reservation is null when refused. */
  async reserveBatch(subject: string, cap: number, tokens: number): Promise<{ decision: LimitDecision; reservation: BatchReservation | null }> {
    const [admitted, count, window, now] = await this.call(subject, 'batch', cap, tokens);
    return { decision: this.decision(admitted === 1, cap, count, window, now), reservation: admitted === 1 ? { subject, window } : null };
  }

  /** Gives `tokens` back to the reservation's window, if it is still the current one. */
  async refund(reservation: BatchReservation, tokens: number): Promise<void> {
    if (tokens > 0) await this.call(reservation.subject, 'refund', 0, tokens, reservation.window);
  }

  private call(subject: string, op: 'take' | 'batch' | 'refund', cap: number, tokens: number, window?: number): Promise<Reply> {
    const args: (string | number)[] = [op, cap, tokens];
    if (window !== undefined) args.push(window);
    return this.redis.perSecondWindow(1, `limit:${this.name}:${subject}`, ...args);
  }

  private decision(allowed: boolean, cap: number, count: number, window: number, now: number): LimitDecision {
    // The window turns at the next whole second: a refused client waits 1 s at most.
    return { ...limitDecision(allowed, cap, count, (window + 1) * 1000, now), ...(allowed ? {} : { retryAfterSeconds: 1 }) };
  }
}
