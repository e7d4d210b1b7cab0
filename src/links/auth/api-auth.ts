// Authentication and the synchronous limits of the link API and MCP endpoint:
//  1. at most AUTH_ATTEMPTS_PER_MINUTE failed or missing keys per IP per minute (then 429 for that IP);
//  2. a valid, unrevoked `Authorization: Bearer <key>` of an Enterprise workspace (else 401 / 403);
//  3. at most API_RATE_LIMIT_PER_MINUTE requests per workspace per minute, REST and MCP together.
// Every response carries X-RateLimit-Limit/-Remaining/-Reset of the limit that applied.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/http/errors.ts';
import { rateLimitHeaders, SlidingWindowLimiter, type LimitDecision } from '../../platform/limits/sliding-window.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Redis } from '../../platform/redis.ts';
import type { ApiKeys } from '../workspaces/api-keys.ts';
import { canUseApi, type Plan } from '../workspaces/plans.ts';
import { clientIp } from './client-ip.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the API auth hook on every authenticated request. */
    auth: { workspaceId: string; keyId: string; plan: Plan };
  }
}

export interface ApiAuthOptions {
  keys: ApiKeys;
  redis: Redis;
  log: Logger;
  apiPerMinute: number;
  authAttemptsPerMinute: number;
}

export function createApiAuth(options: ApiAuthOptions) {
  const authFailures = new SlidingWindowLimiter(options.redis, 'auth-failures-ip', options.authAttemptsPerMinute, 60_000);
  const workspaceRequests = new SlidingWindowLimiter(options.redis, 'api-workspace', options.apiPerMinute, 60_000);

  /** A limit that cannot be checked (Redis away) lets the request through: the limits protect, they must not take the API down. */
  async function decide(run: () => Promise<LimitDecision>): Promise<LimitDecision | undefined> {
    try {
      return await run();
    } catch (err) {
      options.log.warn({ err }, 'rate limit store unavailable; request let through');
      return undefined;
    }
  }

  function refuse(reply: FastifyReply, decision: LimitDecision | undefined, error: ApiError): never {
    if (decision) reply.headers(rateLimitHeaders(decision));
    throw error;
  }

  async function fail(request: FastifyRequest, reply: FastifyReply, code: string, message: string): Promise<never> {
    const ip = clientIp(request);
    const recorded = await decide(() => authFailures.hit(ip));
    if (recorded && !recorded.allowed) {
      refuse(reply, recorded, new ApiError(429, 'auth_rate_limited', 'Too many failed authentication attempts from this address; try again later.'));
    }
    refuse(reply, recorded, new ApiError(401, code, message));
  }

  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const ip = clientIp(request);
    const gate = await decide(() => authFailures.peek(ip));
    // Until the key is known, the headers describe this address's authentication allowance.
    if (gate) reply.headers(rateLimitHeaders(gate));
    if (gate && !gate.allowed) {
      refuse(reply, gate, new ApiError(429, 'auth_rate_limited', 'Too many failed authentication attempts from this address; try again later.'));
    }

    const header = request.headers.authorization;
    if (!header) return fail(request, reply, 'missing_api_key', 'Send your API key as "Authorization: Bearer <key>".');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return fail(request, reply, 'invalid_api_key', 'The Authorization header must be "Bearer <key>".');
    const key = await options.keys.authenticate(match[1]!);
    if (!key) return fail(request, reply, 'invalid_api_key', 'The API key is not valid or has been revoked.');

    if (!canUseApi(key.plan)) {
      throw new ApiError(403, 'plan_upgrade_required', 'API and MCP access need the Enterprise plan.');
    }

    const decision = await decide(() => workspaceRequests.hit(key.workspaceId));
    if (decision) reply.headers(rateLimitHeaders(decision));
    if (decision && !decision.allowed) {
      throw new ApiError(429, 'rate_limited', `More than ${decision.limit} API requests in a minute for this workspace; retry after ${decision.retryAfterSeconds} s.`, undefined, { 'retry-after': String(decision.retryAfterSeconds) });
    }
    request.auth = { workspaceId: key.workspaceId, keyId: key.keyId, plan: key.plan };
  };
}
