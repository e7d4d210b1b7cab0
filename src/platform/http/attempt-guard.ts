// Guards a credential check against guessing: at most N failed or missing
// credentials per client IP per minute, then 429 for that IP. Every product's
// key check and the operator token use it, so one IP has one allowance.
//
// Each attempt is recorded in the IP's window *before* the credential is looked
// up and removed again once it proved valid, so a burst of concurrent guesses
// cannot slip past the limit while their lookups are in flight.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { failOpen } from '../limits/fail-open.ts';
import { rateLimitHeaders, SlidingWindowLimiter, type LimitDecision } from '../limits/sliding-window.ts';
import type { Logger } from '../logger.ts';
import type { Redis } from '../redis.ts';
import { clientIp } from './client-ip.ts';
import { ApiError } from './errors.ts';

export type AttemptGuard = <T>(request: FastifyRequest, reply: FastifyReply, verify: () => Promise<T | undefined>, onFail: () => ApiError) => Promise<T>;

const tooManyFailures = () => new ApiError(429, 'auth_rate_limited', 'Too many failed authentication attempts from this address; try again later.');

/**
 * Records the attempt for the client's IP, refuses with 429 when the IP is over
 * its allowance, runs `verify`, throws `onFail()` when it finds nothing, and
 * forgets the attempt when it succeeds.
 */
export function createAttemptGuard(redis: Redis, log: Logger, perMinute: number): AttemptGuard {
  const failures = new SlidingWindowLimiter(redis, 'auth-failures-ip', perMinute, 60_000);
  return async function guard<T>(request: FastifyRequest, reply: FastifyReply, verify: () => Promise<T | undefined>, onFail: () => ApiError): Promise<T> {
    const ip = clientIp(request);
    const attempt = await failOpen<LimitDecision | undefined>(log, 'auth-failures-ip', () => failures.hit(ip), undefined);
    if (attempt) reply.headers(rateLimitHeaders(attempt));
    if (attempt && !attempt.allowed) {
      reply.header('retry-after', String(attempt.retryAfterSeconds));
      throw tooManyFailures();
    }
    const result = await verify();
    if (result === undefined) throw onFail();
    if (attempt?.member) await failures.undo(ip, attempt.member).catch(() => {});
    return result;
  };
}

/** The bearer token of a request, or undefined when there is no well-formed `Authorization: Bearer <token>`. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  return header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
}
