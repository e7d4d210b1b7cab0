// Authentication and the synchronous limits of the link API and MCP endpoint:
//  1. at most AUTH_ATTEMPTS_PER_MINUTE failed or missing keys per IP per minute (then 429 for that IP);
//  2. a valid, unrevoked `Authorization: Bearer <key>` of an Enterprise workspace (else 401 / 403);
//  3. at most API_RATE_LIMIT_PER_MINUTE requests per workspace per minute, REST and MCP together.
// Every response carries X-RateLimit-Limit/-Remaining/-Reset of the limit that applied.
//
// Each attempt is recorded in the IP's window *before* the key is looked up and
// removed again once the key proved valid, so a burst of concurrent guesses
// cannot slip past the limit while their lookups are in flight.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/http/errors.ts';
import { rateLimitHeaders, SlidingWindowLimiter, type LimitDecision } from '../../platform/limits/sliding-window.ts';
import type { Logger } from '../../platform/logger.ts';
import { failOpen } from '../../platform/limits/fail-open.ts';
import type { Redis } from '../../platform/redis.ts';
import type { ApiKeys } from '../workspaces/api-keys.ts';
import { canUseApi, type Plan } from '../workspaces/plans.ts';
import { clientIp } from '../../platform/http/client-ip.ts';

/** Who a links API request speaks for; set by the links auth hook on every authenticated request. */
export interface LinksAuth {
  workspaceId: string;
  keyId: string;
  plan: Plan;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Declared on the links API's routes with decorateRequest; null until the links auth hook has run. */
    linksAuth: LinksAuth;
  }
}

export interface ApiAuthOptions {
  keys: ApiKeys;
  redis: Redis;
  log: Logger;
  apiPerMinute: number;
  authAttemptsPerMinute: number;
}

const tooManyFailures = () => new ApiError(429, 'auth_rate_limited', 'Too many failed authentication attempts from this address; try again later.');

/**
 * Guards a credential check against guessing: records the attempt for the
 * client's IP, refuses with 429 when the IP is over its allowance, and forgets
 * the attempt if `verify` succeeds. Used by the API keys and the admin token.
 */
export function createAttemptGuard(redis: Redis, log: Logger, perMinute: number) {
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

export function createApiAuth(options: ApiAuthOptions) {
  const guard = createAttemptGuard(options.redis, options.log, options.authAttemptsPerMinute);
  const workspaceRequests = new SlidingWindowLimiter(options.redis, 'api-workspace', options.apiPerMinute, 60_000);

  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    const key = await guard(
      request,
      reply,
      async () => {
        const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
        return match ? options.keys.authenticate(match[1]!) : undefined;
      },
      () =>
        !header
          ? new ApiError(401, 'missing_api_key', 'Send your API key as "Authorization: Bearer <key>".')
          : new ApiError(401, 'invalid_api_key', 'The API key is not valid or has been revoked (send "Authorization: Bearer <key>").'),
    );

    if (!canUseApi(key.plan)) {
      throw new ApiError(403, 'plan_upgrade_required', 'API and MCP access need the Enterprise plan.');
    }

    const decision = await failOpen<LimitDecision | undefined>(options.log, 'api-workspace', () => workspaceRequests.hit(key.workspaceId), undefined);
    if (decision) reply.headers(rateLimitHeaders(decision));
    if (decision && !decision.allowed) {
      throw new ApiError(429, 'rate_limited', `More than ${decision.limit} API requests in a minute for this workspace; retry after ${decision.retryAfterSeconds} s.`, undefined, { 'retry-after': String(decision.retryAfterSeconds) });
    }
    request.linksAuth = { workspaceId: key.workspaceId, keyId: key.keyId, plan: key.plan };
  };
}
