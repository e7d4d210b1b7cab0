// POST /:shortId — the password form of a protected link posts here (its own
// URL). The right password sends the visitor on exactly as GET would for an
// unprotected link (scan limit, the scan recorded, the 302 or pixel page); a
// wrong one answers the form again with 401. Attempts (right or wrong) are
// limited per client IP and link in Redis, so a password cannot be guessed
// quickly; the hash is read from Postgres only here, never on the redirect path.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { ErrorBody } from '../../platform/http/errors.ts';
import type { App } from '../../platform/http/server.ts';
import { clientIp, clientLimitKey } from '../../platform/http/client-ip.ts';
import { failOpen } from '../../platform/limits/fail-open.ts';
import { SlidingWindowLimiter, type LimitDecision } from '../../platform/limits/sliding-window.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Redis } from '../../platform/redis.ts';
import type { RawScan } from '../scans/raw-scan.ts';
import type { LinkState } from '../changelog/link-state.ts';
import { passwordMatches } from '../short-links/link-password.ts';
import { sendPasswordForm } from './password-page.ts';

/** Password attempts per client IP and link in PASSWORD_WINDOW_MS. */
export const PASSWORD_ATTEMPTS = 10;
export const PASSWORD_WINDOW_MS = 15 * 60_000;
/** A form holds one short field. */
const FORM_BODY_LIMIT = 4096;

export interface PasswordRouteDeps {
  redis: Redis;
  log: Logger;
  /** The stored hash of a link's password (null: none). */
  passwordHashOf: (linkId: string) => Promise<string | null>;
  /** The domain a Host serves (null: the base domain; undefined: none). */
  domainOf: (host: string) => string | null | undefined;
  findLink: (shortId: string, domainId: string | null) => LinkState | undefined | Promise<LinkState | undefined>;
  /** Answers as GET /:shortId would once the IP limit admitted it (refusal, redirect or page). */
  redirect: (request: FastifyRequest, reply: FastifyReply, shortId: string, domainId: string | null, ip: string) => void | Promise<void>;
  /** Answers 404 not_found as GET does. */
  notFound: (request: FastifyRequest, reply: FastifyReply) => void;
  record: (scan: RawScan) => void;
}

const page = (description: string) => ({ description, headers: { 'cache-control': Type.String({ description: 'private, no-store, max-age=0' }) }, content: { 'text/html': { schema: Type.String() }, 'application/json': { schema: ref(ErrorBody) } } });

export async function passwordRoute(app: App, deps: PasswordRouteDeps): Promise<void> {
  const attempts = new SlidingWindowLimiter(deps.redis, 'link-password', PASSWORD_ATTEMPTS, PASSWORD_WINDOW_MS);
  // The form's urlencoded body is parsed in a scope of its own; JSON ({"password": …}) is read as everywhere.
  await app.register(async (scope: App) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
      done(null, { password: new URLSearchParams(String(body)).get('password') });
    });
    scope.post<{ Params: { shortId: string } }>('/:shortId', {
      schema: {
        tags: ['redirect'],
        security: [],
        operationId: 'unlockLink',
        summary: 'Give a protected link its password',
        description:
          `The form a password-protected link shows posts \`password\` here (\`application/x-www-form-urlencoded\`; JSON \`{"password": …}\` works too). The right password answers as GET would for a link without one: the 302 (or pixel page), and the scan is recorded then. A wrong one answers the form again with 401 (\`password_incorrect\`), an empty one 400 (\`password_missing\`). At most ${PASSWORD_ATTEMPTS} attempts per ${PASSWORD_WINDOW_MS / 60_000} minutes per client IP and link, right or wrong (429 \`password_rate_limited\` with Retry-After). A link without a password answers as GET.`,
        params: Type.Object({ shortId: Type.String({ maxLength: 200 }) }),
        body: {
          content: {
            'application/x-www-form-urlencoded': { schema: Type.Object({ password: Type.String({ description: 'The link\'s password.' }) }) },
            'application/json': { schema: Type.Object({ password: Type.String({ description: 'The link\'s password.' }) }) },
          },
        } as never,
        response: {
          200: { description: 'The right password for a link with pixels: the page that fires them and sends the visitor on, as GET answers a browser.', content: { 'text/html': { schema: Type.String() } } },
          302: Type.Null({ description: 'The right password: on to the destination (svc_cid appended), as GET answers an unprotected link.', headers: { location: Type.String() } }),
          400: page('No password given (password_missing): the form again.'),
          401: page('A wrong password (password_incorrect): the form again.'),
          404: page('No link has this short ID (not_found).'),
          410: page('The link is deactivated, expired or used up its scan limit.'),
          429: page(`More than ${PASSWORD_ATTEMPTS} attempts in ${PASSWORD_WINDOW_MS / 60_000} minutes from this IP on this link (password_rate_limited).`),
        } as never,
      },
      // The scan of a redirect this answer made, journaled after the response as for GET.
      onResponse: (request, _reply, done) => {
        if (request.redirectScan) deps.record(request.redirectScan);
        done();
      },
    }, async (request, reply) => {
      const { shortId } = request.params;
      const ip = clientIp(request);
      const domainId = deps.domainOf(request.host);
      if (domainId === undefined) return deps.notFound(request, reply);
      const link = await deps.findLink(shortId, domainId);
      if (!link || link.passwordProtected !== true) return deps.redirect(request, reply, shortId, domainId, ip);
      const password = (request.body as { password?: unknown } | undefined)?.password;
      if (typeof password !== 'string' || password === '') return sendPasswordForm(request, reply, 'password_missing');
      // Redis away: attempts are not limited meanwhile (each still costs a slow hash).
      const decision = await failOpen<LimitDecision | undefined>(deps.log, 'link-password', () => attempts.hit(`${link.id}:${clientLimitKey(request)}`), undefined);
      if (decision && !decision.allowed) return sendPasswordForm(request, reply, 'password_rate_limited', { 'retry-after': String(decision.retryAfterSeconds) });
      const hash = await deps.passwordHashOf(link.id);
      if (hash === null || !(await passwordMatches(password, hash))) return sendPasswordForm(request, reply, 'password_incorrect');
      request.passwordAccepted = true;
      return deps.redirect(request, reply, shortId, domainId, ip);
    });
  });
}
