// The analytics pages, at the root, server-rendered (page-html.ts), public:
// - /analytics/:shareId, a link's analytics shared by its workspace (share-store.ts),
//   behind the share's password when it has one (a form; attempts limited as a link
//   password's; a right one gives a session cookie scoped to the share's path);
// - /analytics, the workspace's own page (every link, and each link's), for a session
//   made by signing in with a key on its form (a cookie) or a page token in the URL;
// - each page's live stream, /analytics/:shareId/stream and /analytics/stream (page-stream.ts).
// Numbers come from the analytics API's rollup queries (analytics-queries.ts). A share that
// is unknown, expired or revoked answers 404, as a page no route serves would.
import { PassThrough } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/http/errors.ts';
import { escapeHtml, sendHtmlPage } from '../../platform/http/html-page.ts';
import type { AttemptGuard } from '../../platform/http/attempt-guard.ts';
import { clientLimitKey } from '../../platform/http/client-ip.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { App } from '../../platform/http/server.ts';
import { failOpen } from '../../platform/limits/fail-open.ts';
import { SlidingWindowLimiter, type LimitDecision } from '../../platform/limits/sliding-window.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { Redis } from '../../platform/redis.ts';
import type { AnalyticsQueries } from '../analytics/analytics-queries.ts';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { linkPageResult, pageResultOf, type PageResult } from './page-queries.ts';
import { InFlight } from './in-flight.ts';
import { PASSWORD_ATTEMPTS, PASSWORD_WINDOW_MS } from '../redirect/password-route.ts';
import { passwordMatches } from '../short-links/link-password.ts';
import type { ApiKeys } from '../workspaces/api-keys.ts';
import { canUseApi } from '../workspaces/plans.ts';
import { PAGE_SCRIPT } from './page-script.ts';
import { messagePage, pageFailed, pageRest, pageStart, type PageFrame } from './page-html.ts';
import { PageQuery, pageRange } from './page-range.ts';
import { SESSION_MS, type PageSessions } from './page-sessions.ts';
import type { ShareStore } from './share-store.ts';
import type { PageStreams } from './page-stream.ts';

export interface PageRoutesDeps {
  pg: Pool;
  redis: Redis;
  log: Logger;
  guard: AttemptGuard;
  keys: ApiKeys;
  shares: ShareStore;
  sessions: PageSessions;
  queries: AnalyticsQueries;
  clickhouse: ClickHouse;
  streams: PageStreams;
  /** The host short links are on, for the page's subtitle (a link on a branded domain shows that). */
  shortLinkBase: string;
}

const SHARE_COOKIE = 'analytics_share';
const WORKSPACE_COOKIE = 'analytics_session';
const FORM_BODY_LIMIT = 4096;
/** Links listed on the workspace's page, most scanned first. */
export const LINKS_SHOWN = 500;

/** One cookie of the request (our cookies' values are base64url, so no decoding). */
export function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

function cookie(request: FastifyRequest, name: string, value: string, path: string, maxAgeSeconds: number): string {
  return `${name}=${value}; Path=${path}; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}; HttpOnly; SameSite=Strict${request.protocol === 'https' ? '; Secure' : ''}`;
}

const HTML = { 'text/html': { schema: Type.String() } };
const page = (description: string) => ({ description, content: HTML });
const SHARE_PARAMS = Type.Object({ shareId: Type.String({ maxLength: 100, description: 'The share id (sh_…), from POST /api/v1/links/{id}/analytics/shares.' }) });
const PAGE_TOKEN = Type.Optional(Type.String({ maxLength: 100, description: 'A page token (POST /api/v1/analytics/page-tokens) instead of a signed-in session.' }));
const EVENT_STREAM = { description: 'Server-Sent Events: one `scan` event per recorded scan (data: {"t": epoch ms, "shortId", "country", "device", "browser", "referrer", "variant", "trigger"}; bots left out), with ids for Last-Event-ID.', content: { 'text/event-stream': { schema: Type.String() } } };

function passwordForm(message: string | null): string {
  return messagePage('Password required', `<p>These analytics are protected by a password.</p>
${message === null ? '' : `<p role="alert" style="color:#a4001d"><strong>${escapeHtml(message)}</strong></p>`}
<form method="post"><label for="password">Password</label><br>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Show analytics</button></form>`);
}

function signInForm(message: string | null): string {
  return messagePage('Workspace analytics', `<p>Sign in with an API key of the workspace that holds <code>analytics:read</code>. The key is not kept: it makes a session of 12 hours, which ends sooner if the key is revoked.</p>
${message === null ? '' : `<p role="alert" style="color:#a4001d"><strong>${escapeHtml(message)}</strong></p>`}
<form method="post" action="/analytics"><label for="key">API key</label><br>
<input id="key" name="key" type="password" autocomplete="off" required autofocus size="44">
<button type="submit">Sign in</button></form>`);
}

const NOT_FOUND = messagePage('Not found', '<p>There is no analytics page here. It may have expired or been revoked.</p>');

export async function pageRoutes(app: App, deps: PageRoutesDeps): Promise<void> {
  // Pages for people, not API responses (no key, no X-RateLimit headers): a tag of their own.
  const tags = ['analytics-pages'];
  const attempts = new SlidingWindowLimiter(deps.redis, 'analytics-share-password', PASSWORD_ATTEMPTS, PASSWORD_WINDOW_MS);
  const reads = new InFlight<[PageResult, { links: { shortId: string; scans: number }[]; scanned: number } | undefined]>();
  const notFoundPage = (reply: FastifyReply) => sendHtmlPage(reply, NOT_FOUND, { status: 404 });
  /** A refused query (bad range) as a page with its code. */
  const refusal = (reply: FastifyReply, err: ApiError, back: string) =>
    sendHtmlPage(reply, messagePage('Cannot show this range', `<p data-code="${escapeHtml(err.code)}">${escapeHtml(err.message)}</p><p><a href="${escapeHtml(back)}">Show the last 7 days</a></p>`), { status: err.statusCode });

  /** Renders a page of analytics for a workspace and (optionally) one link, or the refusal of its range. */
  async function render(request: FastifyRequest, reply: FastifyReply, view: {
    workspaceId: string; linkId?: string; heading: string; subtitle?: string; streamUrl: string; keep: Record<string, string>; nav?: string; withLinks: boolean;
  }) {
    const query = request.query as Record<string, string | undefined>;
    const urlWith = (params: Record<string, string | undefined>) => {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries({ ...view.keep, ...params })) if (v !== undefined) q.set(k, v);
      const s = q.toString();
      return s ? `?${s}` : '?';
    };
    let range;
    try {
      range = pageRange(query);
    } catch (err) {
      if (err instanceof ApiError) return refusal(reply, err, urlWith({}));
      throw err;
    }
    const frame: PageFrame = {
      heading: view.heading, ...(view.subtitle ? { subtitle: view.subtitle } : {}), range, urlWith, keep: view.keep, streamUrl: view.streamUrl, ...(view.nav ? { nav: view.nav } : {}),
    };
    // The page's start (its head, title and ranges) goes out at once; its numbers follow when ClickHouse has answered.
    const page = new PassThrough();
    page.write(pageStart(frame));
    sendHtmlPage(reply, page, { scripts: [PAGE_SCRIPT], connectSelf: true });
    try {
      // One link's page reads the link rollups the page's way; the workspace's (every link) the API's summary.
      // Loads of the same page and range at once share one read.
      const key = JSON.stringify([view.workspaceId, view.linkId ?? null, range.from.getTime(), range.to.getTime(), range.interval, view.withLinks]);
      const [result, links] = await reads.get(key, () => Promise.all([
        view.linkId ? linkPageResult(deps.clickhouse, view.workspaceId, range, [view.linkId]) : deps.queries.summary(view.workspaceId, range, {}, false, 10).then(pageResultOf),
        // The most scanned links, and how many there were: a workspace of thousands would make a page no one reads (the export has them all).
        view.withLinks ? deps.queries.topLinkScans(view.workspaceId, range, false, LINKS_SHOWN) : Promise.resolve(undefined),
      ]));
      const shown = links?.links.map((l) => ({ value: l.shortId, label: l.shortId, count: l.scans }));
      page.end(pageRest(frame, result, shown && { rows: shown, more: links!.scanned - shown.length, href: (shortId: string) => urlWith({ link: shortId, ...rangeParams(query) }) }));
    } catch (err) {
      deps.log.error({ err }, 'analytics page: its numbers could not be read');
      page.end(pageFailed);
    }
    return reply;
  }

  const shortUrl = (link: { shortId: string; domain: string | null }) => (link.domain ? `https://${link.domain}/${link.shortId}` : `${deps.shortLinkBase}/${link.shortId}`);

  /** The workspace session of a request: its page token, else its cookie. */
  const workspaceSession = (request: FastifyRequest) => {
    const token = (request.query as { token?: string }).token;
    return deps.sessions.forWorkspace(token ?? cookieOf(request, WORKSPACE_COOKIE));
  };

  app.get('/analytics', {
    schema: {
      tags, security: [], operationId: 'workspaceAnalyticsPage', summary: 'The workspace\'s analytics page',
      description: 'An HTML page of the workspace\'s analytics (every link scanned in the range; `link` for one link\'s), updated live, for a session made on its sign-in form with an API key holding analytics:read, or with a page token (`token`, from POST /api/v1/analytics/page-tokens). Without either, the sign-in form. Query: as the shared page.',
      querystring: Type.Object({ ...PageQuery.properties, token: PAGE_TOKEN, link: Type.Optional(Type.String({ maxLength: 200, description: 'One link\'s analytics, by short ID.' })) }),
      response: { 200: page('The page, or the sign-in form.'), 400: page('A range it cannot show (invalid_range, too_many_buckets, validation_failed).'), 401: page('The token is not valid or has expired: the sign-in form.'), 404: page('`link` names no link of the workspace.') },
    },
  }, async (request, reply) => {
    const session = await workspaceSession(request);
    const { token, link } = request.query;
    if (!session) return sendHtmlPage(reply, signInForm(token ? 'That page token is not valid or has expired.' : null), { status: token ? 401 : 200 });
    const keep: Record<string, string> = token ? { token } : {};
    let linkId: string | undefined;
    let heading = 'Workspace analytics';
    let subtitle: string | undefined;
    if (link !== undefined) {
      const { rows } = await deps.pg.query<{ id: string; short_id: string; domain: string | null; destination: string }>(
        'SELECT id, short_id, domain, destination FROM links WHERE workspace_id = $1 AND short_id = $2', [session.workspaceId, link]);
      if (!rows[0]) return notFoundPage(reply);
      linkId = rows[0].id;
      keep.link = link;
      heading = `Analytics of ${rows[0].short_id}`;
      subtitle = `${shortUrl({ shortId: rows[0].short_id, domain: rows[0].domain })} → ${rows[0].destination}`;
    }
    const stream = new URLSearchParams({ ...(token ? { token } : {}), ...(linkId ? { linkId } : {}) }).toString();
    const back = link !== undefined ? `<a href="${escapeHtml(`?${new URLSearchParams(token ? { token } : {}).toString()}`)}">All links</a>` : '';
    const signOut = token ? '' : '<form method="post" action="/analytics" style="display:inline"><input type="hidden" name="signOut" value="1"><button type="submit">Sign out</button></form>';
    return render(request, reply, {
      workspaceId: session.workspaceId, ...(linkId ? { linkId } : {}), heading, ...(subtitle ? { subtitle } : {}),
      streamUrl: `/analytics/stream${stream ? `?${stream}` : ''}`, keep, withLinks: linkId === undefined,
      nav: back || signOut ? `<p>${back} ${signOut}</p>` : '',
    });
  });

  app.get('/analytics/stream', {
    schema: {
      tags, security: [], operationId: 'workspaceAnalyticsPageStream', summary: 'The workspace analytics page\'s live stream',
      description: 'What the workspace\'s page listens to: the workspace\'s scans (one link\'s with `linkId`), for the page\'s session cookie or `token`. Ends when the session does (the key revoked, the token expired).',
      querystring: Type.Object({ token: PAGE_TOKEN, linkId: Type.Optional(Type.String({ maxLength: 40, description: 'Only this link\'s scans.' })) }),
      response: { 200: EVENT_STREAM, 401: page('No valid session or token.') },
    },
  }, async (request, reply) => {
    const token = request.query.token ?? cookieOf(request, WORKSPACE_COOKIE);
    const session = await deps.sessions.forWorkspace(token);
    if (!session) return sendHtmlPage(reply, messagePage('Not signed in', '<p>Sign in on the analytics page first.</p>'), { status: 401 });
    const linkId = request.query.linkId?.toLowerCase();
    if (linkId !== undefined && !isUuid(linkId)) return sendHtmlPage(reply, NOT_FOUND, { status: 404 });
    return deps.streams.serve(request, reply, { workspaceId: session.workspaceId, ...(linkId ? { linkId } : {}) }, {
      key: `session:${token}`, allowed: async () => (await deps.sessions.forWorkspace(token)) !== undefined,
    });
  });

  app.get('/analytics/:shareId', {
    schema: {
      tags, security: [], operationId: 'sharedAnalyticsPage', summary: 'A link\'s shared analytics page',
      description: 'An HTML page of one link\'s analytics, rendered on the server (it works without JavaScript; charts are inline SVG with their data also as tables): scans over time, countries, devices, browsers, referrers, A/B variants and QR versus click, for a range; with JavaScript it updates itself from the live stream (`/analytics/{shareId}/stream`). A share with a password shows a form first (posted here). Unknown, expired or revoked: 404.',
      params: SHARE_PARAMS,
      querystring: PageQuery,
      response: { 200: page('The page, or the password form.'), 400: page('A range it cannot show (invalid_range, too_many_buckets, validation_failed).'), 404: page('No such share, or it expired or was revoked.') },
    },
  }, async (request, reply) => {
    const open = await deps.shares.open(request.params.shareId);
    if (!open) return notFoundPage(reply);
    const { share, link } = open;
    if (share.password_hash !== null && !(await deps.sessions.forShare(cookieOf(request, SHARE_COOKIE), share.id))) {
      return sendHtmlPage(reply, passwordForm(null));
    }
    const keep: Record<string, string> = {};
    return render(request, reply, {
      workspaceId: share.workspace_id, linkId: link.id, heading: `Analytics of ${link.title || link.shortId}`,
      subtitle: `${shortUrl(link)} → ${link.destination}`, streamUrl: `/analytics/${share.id}/stream`, keep, withLinks: false,
    });
  });

  app.get('/analytics/:shareId/stream', {
    schema: {
      tags, security: [], operationId: 'sharedAnalyticsPageStream', summary: 'A shared analytics page\'s live stream',
      description: 'What the shared page listens to: the scans of the share\'s link only. A share with a password needs the page\'s session cookie. Ends within seconds of the share being revoked or expiring.',
      params: SHARE_PARAMS,
      response: { 200: EVENT_STREAM, 404: page('No such share, it expired or was revoked, or its password was not given.') },
    },
  }, async (request, reply) => {
    const open = await deps.shares.open(request.params.shareId);
    const token = cookieOf(request, SHARE_COOKIE);
    const allowed = async () => {
      const now = await deps.shares.open(request.params.shareId);
      return now !== undefined && (now.share.password_hash === null || (await deps.sessions.forShare(token, now.share.id)));
    };
    if (!open || !(await allowed())) return notFoundPage(reply);
    // Every viewer of a share without a password stands on the same thing: one check for them all.
    const key = `share:${open.share.id}:${open.share.password_hash === null ? '' : token}`;
    return deps.streams.serve(request, reply, { workspaceId: open.share.workspace_id, linkId: open.link.id }, { key, allowed });
  });

  // The forms: urlencoded fields in a scope of their own.
  await app.register(async (scope: App) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
    const formBody = (request: FastifyRequest) => (request.body ?? {}) as Record<string, unknown>;

    scope.post('/analytics/:shareId', {
      schema: {
        tags, security: [], operationId: 'unlockAnalyticsShare', summary: 'Give a shared analytics page its password',
        description: `The password form posts \`password\` here (\`application/x-www-form-urlencoded\`). The right one answers 303 to the page with a session cookie for this share (12 hours at most, and never past the share's end); a wrong one the form again with 401, an empty one 400. At most ${PASSWORD_ATTEMPTS} attempts per ${PASSWORD_WINDOW_MS / 60_000} minutes per client IP and share, right or wrong (then 429 with Retry-After), as for a link's password.`,
        params: SHARE_PARAMS,
        body: { content: { 'application/x-www-form-urlencoded': { schema: Type.Object({ password: Type.String({ description: 'The share\'s password.' }) }) } } } as never,
        response: {
          303: { description: 'The right password (or a share without one): to the page, with the session cookie.', headers: { location: Type.String(), 'set-cookie': Type.String() } },
          400: page('No password given: the form again.'), 401: page('A wrong password: the form again.'), 404: page('No such share, or it expired or was revoked.'),
          429: page(`More than ${PASSWORD_ATTEMPTS} attempts in ${PASSWORD_WINDOW_MS / 60_000} minutes from this IP on this share.`),
        } as never,
      },
    }, async (request, reply) => {
      const { shareId } = request.params as { shareId: string };
      const open = await deps.shares.open(shareId);
      if (!open) return notFoundPage(reply);
      const back = request.url;
      if (open.share.password_hash === null) return reply.code(303).header('location', back).send();
      const password = formBody(request).password;
      if (typeof password !== 'string' || password === '') return sendHtmlPage(reply, passwordForm('Enter the password.'), { status: 400 });
      // Redis away: attempts are not limited meanwhile (each still costs a slow hash), as for link passwords.
      const decision = await failOpen<LimitDecision | undefined>(deps.log, 'analytics-share-password', () => attempts.hit(`${shareId}:${clientLimitKey(request)}`), undefined);
      if (decision && !decision.allowed) {
        return sendHtmlPage(reply, passwordForm('Too many attempts. Wait a few minutes and try again.'), { status: 429, headers: { 'retry-after': String(decision.retryAfterSeconds) } });
      }
      if (!(await passwordMatches(password, open.share.password_hash))) return sendHtmlPage(reply, passwordForm('That password is not right. Try again.'), { status: 401 });
      const end = Math.min(Date.now() + SESSION_MS, open.share.expires_at?.getTime() ?? Infinity);
      const token = await deps.sessions.create({ workspaceId: open.share.workspace_id, shareId }, new Date(end));
      return reply.code(303).header('cache-control', 'no-store').header('set-cookie', cookie(request, SHARE_COOKIE, token, `/analytics/${shareId}`, (end - Date.now()) / 1000)).header('location', back).send();
    });

    scope.post('/analytics', {
      schema: {
        tags, security: [], operationId: 'signInAnalyticsPage', summary: 'Sign in to the workspace\'s analytics page',
        description: 'The sign-in form posts `key` (an API key holding analytics:read, of a workspace whose plan has the API) here: answers 303 to the page with a session cookie of 12 hours (ended sooner when the key is revoked). The key is not kept. Failed keys count against the same per-IP allowance as the API\'s (then 429). `signOut=1` ends the session instead.',
        body: { content: { 'application/x-www-form-urlencoded': { schema: Type.Object({ key: Type.Optional(Type.String({ description: 'An API key (lk_live_…).' })), signOut: Type.Optional(Type.String({ description: '1: end the session.' })) }) } } } as never,
        response: {
          303: { description: 'Signed in (or out): to the page.', headers: { location: Type.String(), 'set-cookie': Type.String() } },
          400: page('No key given: the form again.'), 401: page('Not a valid key: the form again.'), 403: page('The key lacks analytics:read, or its plan has no API.'), 429: page('Too many failed keys from this IP.'),
        } as never,
      },
    }, async (request, reply) => {
      const body = formBody(request);
      if (body.signOut !== undefined) {
        const current = cookieOf(request, WORKSPACE_COOKIE);
        if (current) await deps.sessions.end(current);
        return reply.code(303).header('set-cookie', cookie(request, WORKSPACE_COOKIE, '', '/analytics', 0)).header('location', '/analytics').send();
      }
      const key = typeof body.key === 'string' ? body.key.trim() : '';
      if (key === '') return sendHtmlPage(reply, signInForm('Enter an API key.'), { status: 400 });
      const checked = await deps.guard.checkSubject(clientLimitKey(request), () => deps.keys.authenticate(key));
      if ('refused' in checked) {
        return checked.refused === 'limited'
          ? sendHtmlPage(reply, signInForm('Too many failed attempts from this address; try again in a minute.'), { status: 429, headers: { 'retry-after': '60' } })
          : sendHtmlPage(reply, signInForm('That key is not valid or has been revoked.'), { status: 401 });
      }
      const found = checked.found;
      if (!canUseApi(found.plan)) return sendHtmlPage(reply, signInForm('This workspace\'s plan does not include the API and its analytics page.'), { status: 403 });
      if (!found.scopes.includes('analytics:read')) return sendHtmlPage(reply, signInForm('This key lacks the scope analytics:read.'), { status: 403 });
      const token = await deps.sessions.create({ workspaceId: found.workspaceId, keyId: found.keyId }, new Date(Date.now() + SESSION_MS));
      return reply.code(303).header('cache-control', 'no-store').header('set-cookie', cookie(request, WORKSPACE_COOKIE, token, '/analytics', SESSION_MS / 1000)).header('location', '/analytics').send();
    });
  });
}

/** The range parameters of a page's query, to carry into its links. */
function rangeParams(query: Record<string, string | undefined>): Record<string, string | undefined> {
  return { range: query.range, from: query.from, to: query.to, interval: query.interval };
}
