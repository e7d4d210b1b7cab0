// The client address of a request. Fastify's trustProxy (TRUSTED_PROXIES)
// decides whether X-Forwarded-For is believed, so request.ip is already the
// right one; this names the rule in one place.
import type { FastifyRequest } from 'fastify';

export const clientIp = (request: FastifyRequest): string => request.ip;
