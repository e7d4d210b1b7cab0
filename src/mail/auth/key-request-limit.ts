// The per-key request limit of the mail API (spec, Limits: "Requests per key" and
// "POST /emails/batch"): the key's own cap (1..1000) or API_RATE_LIMIT_PER_SEC
// (10 when unset or 0) requests per one-second window, shared by every ingress
// through Redis (platform/limits/per-second-window.ts). A route with config
// `mailBatch` (POST /emails/batch) reserves 100 tokens before its body is read;
// its handler settles the reservation with the messages it took, and whatever
// is not settled when the response goes out is refunded.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/http/errors.ts';
import { failOpen } from '../../platform/limits/fail-open.ts';
import { PerSecondWindow, type BatchReservation } from '../../platform/limits/per-second-window.ts';
import { fullAllowance, rateLimitHeaders, type LimitDecision } from '../../platform/limits/sliding-window.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Redis } from '../../platform/redis.ts';
import type { MailKeyGrant } from '../accounts/mail-keys.ts';
import { defaultRequestsPerSecond, type MailConfig } from '../config.ts';

/** Tokens a batch reserves before its body is read: the most messages one batch may hold. */
export const BATCH_TOKENS = 100;

declare module 'fastify' {
  interface FastifyRequest {
    /** The batch's reservation until the handler settles it. */
    mailBatchReservation: { reservation: BatchReservation; settled: boolean } | null;
  }
  interface FastifyContextConfig {
    /** The route is POST /emails/batch: one token per message, reserved up front. */
    mailBatch?: boolean;
  }
}

const NAME = 'mail-key-requests';

export interface KeyRequestLimit {
  /** The auth hook's step: applies the limit for the key and sets the headers, or throws 429. */
  limit: (request: FastifyRequest, reply: FastifyReply, grant: MailKeyGrant) => Promise<void>;
  /** One request of the key outside HTTP (a message submitted to the SMTP relay): its decision, Redis away or not. */
  take: (grant: MailKeyGrant) => Promise<LimitDecision>;
  /** A batch handler's settlement: `used` messages of the reservation are spent, the rest go back. */
  settleBatch: (request: FastifyRequest, used: number) => Promise<void>;
  /** onResponse hook: refunds a reservation that no handler settled (a refused batch used nothing). */
  refundUnsettled: (request: FastifyRequest) => Promise<void>;
}

export function createKeyRequestLimit(redis: Redis, log: Logger, config: MailConfig): KeyRequestLimit {
  const window = new PerSecondWindow(redis, NAME);
  const platformCap = defaultRequestsPerSecond(config);

  const refund = async (request: FastifyRequest, tokens: number) => {
    const held = request.mailBatchReservation;
    if (!held || held.settled) return;
    held.settled = true;
    if (tokens > 0) await failOpen(log, NAME, () => window.refund(held.reservation, tokens), undefined);
  };

  const capOf = (grant: MailKeyGrant) => grant.rateLimit ?? platformCap;
  // Redis away: let the request through, with a decision (and headers) that show the whole allowance.
  const unmeasured = (cap: number) => fullAllowance(cap, 1000);
  const take = (grant: MailKeyGrant) => failOpen(log, NAME, () => window.take(grant.keyId, capOf(grant)), unmeasured(capOf(grant)));

  return {
    take,
    async limit(request, reply, grant) {
      const cap = capOf(grant);
      let decision: LimitDecision;
      if (request.routeOptions.config.mailBatch && !request.is404) {
        const reserved = await failOpen(log, NAME, () => window.reserveBatch(grant.keyId, cap, BATCH_TOKENS), { decision: unmeasured(cap), reservation: null });
        decision = reserved.decision;
        request.mailBatchReservation = reserved.reservation ? { reservation: reserved.reservation, settled: false } : null;
      } else {
        decision = await take(grant);
      }
      reply.headers(rateLimitHeaders(decision));
      if (!decision.allowed) {
        throw new ApiError(429, 'rate_limited', `More than ${cap} requests in this second for this key (a batch costs one per message, and only one batch a second is admitted); retry after 1 s.`, undefined, { 'retry-after': '1' });
      }
    },
    settleBatch: (request, used) => refund(request, BATCH_TOKENS - used),
    refundUnsettled: (request) => refund(request, BATCH_TOKENS),
  };
}
