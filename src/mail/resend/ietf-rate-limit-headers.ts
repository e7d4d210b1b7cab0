// The IETF rate-limit headers (draft-ietf-httpapi-ratelimit-headers, as Resend
// sends them) beside today's X-RateLimit-*: ratelimit-limit, ratelimit-remaining,
// and ratelimit-reset in seconds from now (X-RateLimit-Reset is an epoch second).
import type { FastifyReply, FastifyRequest } from 'fastify';

export async function addIetfRateLimitHeaders(_request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  const limit = reply.getHeader('x-ratelimit-limit');
  const remaining = reply.getHeader('x-ratelimit-remaining');
  const reset = Number(reply.getHeader('x-ratelimit-reset'));
  if (limit !== undefined) reply.header('ratelimit-limit', limit);
  if (remaining !== undefined) reply.header('ratelimit-remaining', remaining);
  if (Number.isFinite(reset)) reply.header('ratelimit-reset', String(Math.max(0, reset - Math.floor(Date.now() / 1000))));
  return payload;
}
