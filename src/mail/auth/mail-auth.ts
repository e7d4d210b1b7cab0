// Authentication and access of the mail API (/api/v1 mail routes, /emails, /events):
//  1. at most AUTH_ATTEMPTS_PER_MINUTE failed or missing keys per IP per minute, through the
//     platform's attempt guard (shared with the link product's keys and the operator token);
//  2. a valid, unrevoked `Authorization: Bearer mk_live_…` (else 401);
//  3. the access the route declares, by the key's kind (else 403; permissions.ts), and a key
//     without domain restriction where the route spans every domain (else 403);
//  4. the key's requests per second (key-request-limit.ts; else 429 rate_limited, Retry-After: 1).
// Every response carries X-RateLimit-Limit/-Remaining/-Reset of the limit that applied.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, type AttemptGuard } from '../../platform/http/attempt-guard.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { MAIL_KEY_PREFIX, type MailKeyGrant, type MailKeys } from '../accounts/mail-keys.ts';
import { requireAccess, requireWholeOrganization, type MailAccess } from './permissions.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the mail auth hook on every authenticated mail request. */
    mailAuth: MailKeyGrant;
  }
  interface FastifyContextConfig {
    /** The access a mail route needs (permissions.ts); required on every mail route. */
    mailAccess?: MailAccess;
    /** The route's data spans every domain of the organization: domain-restricted keys are refused. */
    wholeOrganization?: true;
  }
}

/** The OpenAPI security scheme of mail keys. */
export const MAIL_SECURITY_SCHEME = 'mailKey';

/** Whether the request carries a mail key (by its prefix), valid or not. */
export const hasMailKey = (request: FastifyRequest): boolean => bearerToken(request)?.startsWith(MAIL_KEY_PREFIX) ?? false;

export interface MailAuthOptions {
  keys: MailKeys;
  guard: AttemptGuard;
  /** Applies the key's request limit (sets the limit headers, throws 429). */
  limitRequests: (request: FastifyRequest, reply: FastifyReply, grant: MailKeyGrant) => Promise<void>;
}

export function createMailAuth(options: MailAuthOptions) {
  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    const grant = await options.guard.check(
      request,
      reply,
      async () => {
        const token = bearerToken(request);
        return token ? options.keys.authenticate(token) : undefined;
      },
      () =>
        !header
          ? new ApiError(401, 'missing_api_key', 'Send your mail API key as "Authorization: Bearer <key>".')
          : new ApiError(401, 'invalid_api_key', 'The API key is not valid or has been revoked (send "Authorization: Bearer mk_live_…").'),
    );
    // An unknown path under /api/v1 declares no access: it is answered 404 after the limit.
    const access = request.is404 ? undefined : request.routeOptions.config.mailAccess;
    if (access) requireAccess(grant, access);
    if (access && request.routeOptions.config.wholeOrganization) requireWholeOrganization(grant);
    await options.limitRequests(request, reply, grant);
    request.mailAuth = grant;
  };
}

/** For the mail contexts' onRoute hook: a mail route must say what access it needs. */
export function requireDeclaredAccess(route: { method: string | string[]; url: string; config?: unknown }): void {
  const config = route.config as { mailAccess?: MailAccess } | undefined;
  if (!config?.mailAccess) throw new Error(`mail route ${String(route.method)} ${route.url} declares no mailAccess (deny by default)`);
}
