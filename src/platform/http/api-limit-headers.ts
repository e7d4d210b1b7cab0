// Every API response carries X-RateLimit-Limit, -Remaining and -Reset (spec).
// A response whose credential check or product limit already set them keeps
// those (the workspace's allowance, or the IP's failed-authentication allowance
// on a refused credential). Any other API response (a public route such as
// /api/v1/openapi or /.well-known/mcp.json, a refusal before any credential was
// looked at, an unknown path, a malformed URL) gets the client IP's
// failed-authentication allowance, read without counting. Redis away: the
// configured allowance, all of it remaining (attempt-guard.ts).
//
// API responses: everything under /api, /admin and /.well-known, and answers no
// route gave (a malformed URL, an unknown path). Not the redirect (/:shortId,
// which has a per-IP limit of its own and is the hot path) nor the health probes.
// A malformed URL is refused before Fastify applies TRUSTED_PROXIES: its headers
// describe the TCP peer's allowance (behind a proxy, the proxy's).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { rateLimitHeaders, type LimitDecision } from '../limits/sliding-window.ts';
import type { App } from './server.ts';

/** The allowance an API response describes when nothing else set its limit headers; never rejects. */
export type DefaultAllowance = (request: FastifyRequest) => Promise<LimitDecision>;

const API_PATH = /^\/(api|admin|\.well-known)(\/|\?|$)/;

const isApiResponse = (request: FastifyRequest): boolean => API_PATH.test(request.url) || request.routeOptions.url === undefined;

/** Sets the allowance's headers: it is described, not refused (no Retry-After). */
export async function setAllowanceHeaders(request: FastifyRequest, reply: FastifyReply, allowance: DefaultAllowance): Promise<void> {
  reply.headers(rateLimitHeaders({ ...(await allowance(request)), allowed: true }));
}

/** Adds the default allowance's headers to every API response that has none (routes' responses; see server.ts for malformed URLs). */
export function addApiLimitHeaders(app: App, allowance: DefaultAllowance): void {
  // A callback hook: on the redirect path it returns at once, without a promise.
  app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) => {
    if (reply.hasHeader('x-ratelimit-limit') || !isApiResponse(request)) return done(null, payload);
    void setAllowanceHeaders(request, reply, allowance).then(() => {
      // Fastify may have answered meanwhile on its own (a 503 while the server closes): nothing left to send.
      if (!reply.raw.headersSent) done(null, payload);
    });
  });
}
