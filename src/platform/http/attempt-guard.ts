// Guards a credential check against guessing: at most N failed or missing
// credentials per client IP (an IPv6 client per network, client-ip.ts) per minute, then
// 429 for that IP. Every product's key check and the operator token use it, so
// one IP has one allowance.
//
// Only failures count. The IP's count is read first without recording (a
// client over its allowance is refused before any lookup); a failure is then
// recorded, and only while the window has room for it: concurrent guesses that
// all passed the first read cannot get more than N failures answered, the rest
// get 429. Valid credentials are never recorded, so any number of concurrent
// good requests pass while the IP is within its allowance; once it is spent,
// every request from the IP is refused, good ones too, until the window has room
// (the allowance is read before the credential is looked at).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { failOpen } from '../limits/fail-open.ts';
import { fullAllowance, rateLimitHeaders, SlidingWindowLimiter, type LimitDecision } from '../limits/sliding-window.ts';
import type { Logger } from '../logger.ts';
import type { Redis } from '../redis.ts';
import { clientLimitKey } from './client-ip.ts';
import { ApiError } from './errors.ts';

export interface AttemptGuard {
  /**
   * Refuses with 429 when the client's IP is over its allowance, runs `verify`, and returns what it
   * found; when it finds nothing, counts the failure and throws `onFail()` (or 429 when the failure
   * did not fit in the window). Sets the allowance's X-RateLimit-* headers either way.
   */
  check<T>(request: FastifyRequest, reply: FastifyReply, verify: () => Promise<T | undefined>, onFail: () => ApiError): Promise<T>;
  /** The IP's allowance as it stands, without counting anything (for responses that checked no credential). */
  allowance(request: FastifyRequest): Promise<LimitDecision>;
  /**
   * The same allowance for a credential checked outside HTTP (the SMTP relay's AUTH), by the
   * client's limit subject (client-ip.ts limitKey): what `verify` found, or why there is nothing.
   */
  checkSubject<T>(subject: string, verify: () => Promise<T | undefined>): Promise<{ found: T } | { refused: 'failed' | 'limited' }>;
}

const WINDOW_MS = 60_000;
const NAME = 'auth-failures-ip';

const tooManyFailures = (decision: LimitDecision) =>
  new ApiError(429, 'auth_rate_limited', 'Too many failed authentication attempts from this address; try again later.', undefined, rateLimitHeaders(decision));

export function createAttemptGuard(redis: Redis, log: Logger, perMinute: number): AttemptGuard {
  const failures = new SlidingWindowLimiter(redis, NAME, perMinute, WINDOW_MS);
  // Redis away: the limit is not applied (fail open) and the headers show the whole allowance.
  const unmeasured = () => fullAllowance(perMinute, WINDOW_MS);

  const allowance = (request: FastifyRequest) => failOpen(log, NAME, () => failures.peek(clientLimitKey(request)), unmeasured());

  /** The one sequence of both checks: refused while over the allowance, else verify, else count the failure. */
  type Attempt<T> = { found: T } | { refused: 'failed' | 'limited'; decision: LimitDecision };
  async function attempt<T>(subject: string, verify: () => Promise<T | undefined>, seen: (decision: LimitDecision) => void): Promise<Attempt<T>> {
    const before = await failOpen(log, NAME, () => failures.peek(subject), unmeasured());
    seen(before);
    if (!before.allowed) return { refused: 'limited', decision: before };
    const found = await verify();
    if (found !== undefined) return { found };
    const failure = await failOpen(log, NAME, () => failures.hit(subject), unmeasured());
    seen(failure);
    return { refused: failure.allowed ? 'failed' : 'limited', decision: failure };
  }

  return {
    allowance,
    async checkSubject(subject, verify) {
      const result = await attempt(subject, verify, () => {});
      return 'found' in result ? { found: result.found } : { refused: result.refused };
    },
    async check(request, reply, verify, onFail) {
      const result = await attempt(clientLimitKey(request), verify, (decision) => reply.headers(rateLimitHeaders(decision)));
      if ('found' in result) return result.found;
      if (result.refused === 'limited') throw tooManyFailures(result.decision);
      throw onFail();
    },
  };
}

/** Whether the request carries a key (`Authorization: Bearer …`): an API client, not a visitor following a link. */
export const hasBearerKey = (request: FastifyRequest): boolean => /^Bearer\s+\S/i.test(request.headers.authorization ?? '');

/** The bearer token of a request, or undefined when there is no well-formed `Authorization: Bearer <token>`. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  return header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
}
