// The journaled record of an orphan visit (orphan-visit.ts), made by the
// redirect when a branded domain's fallback sends a visitor on.
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { DomainFallbacks } from '../domains/served-domains.ts';
import type { OrphanVisitType, RawOrphanVisit } from './orphan-visit.ts';

/** Paths are kept to this length (a short ID is at most 200 characters). */
const MAX_PATH = 200;

export function orphanVisitOf(request: FastifyRequest, domainId: string, fallbacks: DomainFallbacks, type: OrphanVisitType, ip: string): RawOrphanVisit {
  const queryAt = request.url.indexOf('?');
  const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt);
  return {
    visitId: randomUUID(),
    orphanType: type,
    workspaceId: fallbacks.workspaceId,
    domainId,
    domain: fallbacks.name,
    path: path.slice(0, MAX_PATH),
    timestamp: Date.now(),
    ip,
    userAgent: request.headers['user-agent'] ?? null,
    referrer: request.headers.referer ?? null,
  };
}
