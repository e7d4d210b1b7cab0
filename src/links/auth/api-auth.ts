// Authentication and the synchronous limits of the link API and MCP endpoint:
//  1. at most AUTH_ATTEMPTS_PER_MINUTE failed or missing keys per IP per minute (then 429 for that IP),
//     through the platform's attempt guard, shared with the operator token (only failures count);
//  2. a valid, unrevoked `Authorization: Bearer <key>` of an Enterprise workspace (else 401 / 403);
//  3. at most API_RATE_LIMIT_PER_MINUTE requests per workspace per minute, REST and MCP together.
// Every response carries X-RateLimit-Limit/-Remaining/-Reset of the limit that applied.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/server.ts';
import { bearerToken, type AttemptGuard } from '../../platform/http/attempt-guard.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { fullAllowance, rateLimitHeaders, SlidingWindowLimiter } from '../../platform/limits/sliding-window.ts';
import type { Logger } from '../../platform/logger.ts';
import { failOpen } from '../../platform/limits/fail-open.ts';
import type { Redis } from '../../platform/redis.ts';
import { API_KEY_PREFIX, type ApiKeys } from '../workspaces/api-keys.ts';
import { canUseApi, type Plan } from '../workspaces/plans.ts';
import { insufficientScope, scopeOfRoute, type Scope } from './scopes.ts';

/** Who a links API request speaks for; set by the links auth hook on every authenticated request. */
export interface LinksAuth {
  workspaceId: string;
  keyId: string;
  plan: Plan;
  /** What the key may do (scopes.ts). */
  scopes: ReadonlySet<Scope>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a links API route needs, set when it is registered (requireRouteScopes). */
    linkScope?: Scope;
  }
  interface FastifyRequest {
    /** Declared on the links API's routes with decorateRequest; set by the links auth hook before any handler runs. */
    linksAuth: LinksAuth;
  }
}

export interface ApiAuthOptions {
  keys: ApiKeys;
  redis: Redis;
  log: Logger;
  guard: AttemptGuard;
  apiPerMinute: number;
}

const WINDOW_MS = 60_000;

/** Whether the request carries a links key (by its prefix), valid or not. */
export const hasLinksKey = (request: FastifyRequest): boolean => bearerToken(request)?.startsWith(API_KEY_PREFIX) ?? false;

export function createApiAuth(options: ApiAuthOptions) {
  const workspaceRequests = new SlidingWindowLimiter(options.redis, 'api-workspace', options.apiPerMinute, WINDOW_MS);

  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    const key = await options.guard.check(
      request,
      reply,
      async () => {
        const token = bearerToken(request);
        return token ? options.keys.authenticate(token) : undefined;
      },
      () =>
        !header
          ? new ApiError(401, 'missing_api_key', 'Send your API key as "Authorization: Bearer <key>".')
          : new ApiError(401, 'invalid_api_key', 'The API key is not valid or has been revoked (send "Authorization: Bearer <key>").'),
    );

    if (!canUseApi(key.plan)) {
      throw new ApiError(403, 'plan_upgrade_required', 'API and MCP access need the Enterprise plan.');
    }

    // Redis away: let the request through, with headers that show the whole allowance.
    const decision = await failOpen(options.log, 'api-workspace', () => workspaceRequests.hit(key.workspaceId), fullAllowance(options.apiPerMinute, WINDOW_MS));
    reply.headers(rateLimitHeaders(decision));
    if (!decision.allowed) {
      throw new ApiError(429, 'rate_limited', `More than ${decision.limit} API requests in a minute for this workspace; retry after ${decision.retryAfterSeconds} s.`, undefined, { 'retry-after': String(decision.retryAfterSeconds) });
    }
    request.linksAuth = { workspaceId: key.workspaceId, keyId: key.keyId, plan: key.plan, scopes: new Set(key.scopes) };
  };
}

/**
 * Gives every route registered after it in `scope` the scope it needs (a route without one fails
 * the start), and refuses a request whose key lacks it (403 insufficient_scope), after `authenticate`
 * and before the body is looked at.
 */
export function requireRouteScopes(scope: App): void {
  scope.addHook('onRoute', (route) => {
    const path = route.url.slice(route.prefix.length);
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const scopes = new Set(methods.map((m) => scopeOfRoute(m, path)));
    if (scopes.size !== 1) throw new Error(`link route ${path} needs one scope for all its methods`);
    route.config = { ...route.config, linkScope: [...scopes][0] };
  });
  scope.addHook('onRequest', async (request) => {
    const needed = request.routeOptions.config.linkScope;
    if (needed && !request.linksAuth.scopes.has(needed)) throw insufficientScope(needed);
  });
}
