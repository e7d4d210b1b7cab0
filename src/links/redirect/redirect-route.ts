// GET /:shortId — the hot path. Answered from the in-memory link cache; only a
// short ID the cache does not have is read through from Postgres
// (link-read-through.ts); the scan is journaled after the response is sent and reaches Kafka
// from there (scan-journal.ts), enriched on the way (scan-enrichment.ts), so the
// request itself does only what the answer needs. Refusals get a small HTML
// page (or the JSON error body for clients that ask for JSON).
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { errorBody, requestIdOf, type App } from '../../platform/http/server.ts';
import { ref } from '../../platform/http/components.ts';
import { ErrorBody } from '../../platform/http/errors.ts';
import { documentOnly, OTHER_ANSWERS, RATE_LIMIT_HEADERS } from '../../platform/http/openapi.ts';
import { rateLimitHeaders, type LimitDecision } from '../../platform/limits/sliding-window.ts';
import { BufferedSlidingWindow } from '../../platform/limits/buffered-sliding-window.ts';
import type { Logger } from '../../platform/logger.ts';
import { failOpen } from '../../platform/limits/fail-open.ts';
import type { Redis } from '../../platform/redis.ts';
import { clientIp, clientLimitKey, limitKeyOf } from '../../platform/http/client-ip.ts';
import { answerCounter } from '../../platform/metrics/http-metrics.ts';
import { hasBearerKey } from '../../platform/http/attempt-guard.ts';
import type { ClickIds } from '../scans/click-id.ts';
import type { RawScan } from '../scans/raw-scan.ts';
import { linkKey, type LinkState } from '../changelog/link-state.ts';
import type { ServedDomains } from '../domains/served-domains.ts';
import { deviceUrl, platformOf, withClickId, withQuery, withUtm } from './destination.ts';
import { forwardedQuery, routingOf, variantFor, type LinkRouting } from './link-routing.ts';
import type { VisitorCountry } from './visitor-country.ts';
import type { LinkCache } from './link-cache.ts';
import type { LinkReadThrough } from './link-read-through.ts';
import { htmlPage, REFUSALS, type Refusal } from './pages.ts';
import { PIXEL_PAGE_RESPONSE, sendPixelPage, wantsPixelPage } from './pixel-page.ts';
import type { ScanLimitGuard } from './scan-limit-guard.ts';
import { answeredBeforeRedirect, usesPageBeforeRedirect } from './before-redirect.ts';
import { passwordRoute } from './password-route.ts';
import type { ShortLinksAtRoot } from '../../platform/http/root-short-links.ts';
import { visitQueryOf } from './qr-marker.ts';
import type { RawOrphanVisit } from '../orphans/orphan-visit.ts';
import { orphanVisitOf } from '../orphans/orphan-redirect.ts';

/** What choosing a destination and recording a scan read of a request: Fastify's or Node's own. */
interface Visit {
  url: string;
  headers: IncomingHttpHeaders;
}

/** The short ID of a path that is one segment of a short ID's characters (and an optional trailing slash, as the router ignores it), with any query; else undefined. */
function shortIdOfPath(url: string): string | undefined {
  const end = url.indexOf('?');
  const path = end === -1 ? url : url.slice(0, end);
  const match = SHORT_PATH.exec(path);
  return match ? match[1] : undefined;
}

// Short IDs are letters, digits, '-' and '_' (short-id.ts); a path with anything else (an escape, a dot) goes to Fastify.
const SHORT_PATH = /^\/([A-Za-z0-9_-]{1,200})\/?$/;

export interface RedirectDeps {
  cache: LinkCache;
  /** Asked only when the cache does not have the short ID. */
  readThrough: LinkReadThrough;
  scanLimits: ScanLimitGuard;
  clickIds: ClickIds;
  redis: Redis;
  log: Logger;
  /** Which links a request's Host serves: the base domain's, a verified branded domain's, or none. */
  domains: Pick<ServedDomains, 'resolve' | 'fallbacksOf'>;
  /** Where scans (and branded domains' orphan visits) go after the response (the journal). */
  record: (entry: RawScan | RawOrphanVisit) => void;
  redirectsPerMinute: number;
  /** The visitor's country, for links with geo destinations. */
  countries: VisitorCountry;
  /** The stored hash of a protected link's password, read only when one is posted. */
  passwordHashOf: (linkId: string) => Promise<string | null>;
}

/** Why the link does not redirect now, if it does not. */
export function refusalFor(link: LinkState | undefined, now: number): Refusal | undefined {
  if (!link) return 'not_found';
  if (!link.isActive) return 'link_inactive';
  if (link.expiresAt !== null && link.expiresAt <= now) return 'link_expired';
  if (link.exhaustedAt !== null) return 'scan_limit_reached';
  // Loose: a state written before validFrom existed has none.
  if (link.validFrom != null && link.validFrom > now) return 'link_not_yet_valid';
  return undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The scan a redirect recorded, journaled once the response is sent; declared with decorateRequest below. */
    redirectScan: RawScan | null;
    /** The orphan visit a branded domain's fallback recorded, journaled once the response is sent. */
    orphanVisit: RawOrphanVisit | null;
  }
}

/** A refusal as it is sent: a small HTML page, or the error body to a client that accepts application/json. */
const refusalResponse = (description: string, headers: object = {}) => ({
  description,
  headers: { 'cache-control': Type.String({ description: 'no-store' }), ...headers },
  content: {
    'text/html': { schema: Type.String({ description: 'A small page saying why.' }) },
    'application/json': { schema: ref(ErrorBody) },
  },
});

/** The JSON 404: the error object, and for an API client Resend's fields beside it. */
const ApiNotFound = Type.Object({
  statusCode: Type.Optional(Type.Integer({ description: 'With a key: 404.' })),
  name: Type.Optional(Type.String({ description: 'With a key: not_found (Resend\'s name).' })),
  message: Type.Optional(Type.String()),
  error: ErrorBody.properties.error,
});

const REDIRECT_RESPONSES = {
  302: Type.Null({
    description: 'Redirect (GET and HEAD). A HEAD request is not a scan and its Location has no svc_cid; it is refused like GET once a scan-limited link has no scans left.',
    headers: {
      location: Type.String({ description: 'The destination (or the iOS/Android URL for those devices) with `svc_cid=<click ID>` appended.' }),
      'cache-control': Type.String({ description: 'private, no-store, max-age=0: every scan must reach the service.' }),
    },
  }),
  400: { ...ref(ErrorBody), description: 'The short ID is longer than 200 characters (validation_failed).' },
  401: refusalResponse('A password-protected link asked for with Accept: application/json (password_required); a browser gets the password form (200).'),
  404: {
    ...refusalResponse('No link has this short ID on this host, or the host serves no links (not_found); a branded domain with a `notFoundUrl` redirects there instead (302, no click ID, recorded as an orphan visit). A request with a key (`Authorization: Bearer …`) is an API client at a path no resource has: JSON in the shape of Resend\'s errors (`statusCode`, `name: not_found`, `message`) with the error object, whatever its Accept.'),
    content: {
      'text/html': { schema: Type.String({ description: 'A small page saying why.' }) },
      'application/json': { schema: ApiNotFound },
    },
  },
  410: refusalResponse('The link is deactivated (link_inactive), expired (link_expired) or used up its scan limit (scan_limit_reached).'),
  429: refusalResponse('More than the allowed redirects per minute from this IP (redirect_rate_limited).', { ...RATE_LIMIT_HEADERS, 'retry-after': Type.Integer({ description: 'Seconds to wait.' }) }),
};

export async function redirectRoutes(app: App, deps: RedirectDeps): Promise<ShortLinksAtRoot> {
  app.decorateRequest('redirectScan', null);
  app.decorateRequest('orphanVisit', null);
  // Its own key name: the exact limiter kept sorted sets under limit:redirect-ip:*, this one keeps hashes.
  const limiter = new BufferedSlidingWindow(deps.redis, 'redirect-ip-s', deps.redirectsPerMinute, 60_000);

  function refuse(request: FastifyRequest, reply: FastifyReply, refusal: Refusal): void {
    const { status, title, message } = REFUSALS[refusal];
    reply.status(status).header('cache-control', 'no-store');
    // A key at a path no route or link has (GET /nosuchresource with Resend's SDK): Resend's not_found, not a page.
    if (refusal === 'not_found' && hasBearerKey(request)) {
      const text = `No resource or link at ${request.url.split('?')[0]!.slice(0, 200)}.`;
      reply.type('application/json; charset=utf-8').send({ statusCode: 404, name: 'not_found', message: text, ...errorBody(request.id, 'not_found', text) });
    } else if ((request.headers.accept ?? '').includes('application/json')) reply.send(errorBody(request.id, refusal, message));
    else reply.type('text/html; charset=utf-8').send(htmlPage(title, message));
  }

  /** Answers a request the IP limit admitted; a promise only on a cache miss or when a scan limit must be asked. */
  function redirect(request: FastifyRequest, reply: FastifyReply, shortId: string, domainId: string | null, ip: string): void | Promise<void> {
    // The base domain's links are keyed by their short ID alone: no key to build on the common path.
    const link = deps.cache.get(domainId === null ? shortId : linkKey(domainId, shortId));
    if (link) return answer(request, reply, link, ip);
    // Not in memory: perhaps created a moment ago on another ingress.
    return deps.readThrough.find(shortId, domainId).then((found) => (found ? answer(request, reply, found, ip) : unknownShortId(request, reply, domainId, ip)));
  }

  /** A short ID no link has on this host: to its branded domain's notFoundUrl (an orphan visit), else 404 as ever. */
  function unknownShortId(request: FastifyRequest, reply: FastifyReply, domainId: string | null, ip: string): void {
    const fallbacks = deps.domains.fallbacksOf(domainId);
    if (!fallbacks?.notFoundUrl) return refuse(request, reply, 'not_found');
    // Only a GET is a visit (HEAD learns where it goes; a password form's POST is not one either).
    if (request.method === 'GET') request.orphanVisit = orphanVisitOf(request, domainId!, fallbacks, 'invalid_short_url', ip);
    reply.header('cache-control', 'private, no-store, max-age=0').redirect(fallbacks.notFoundUrl, 302);
  }

  /** Runs `go` once the client's redirects-per-minute admit the request, else refuses it (429); for a domain's root (GET /:shortId has it written out). */
  function admitted(request: FastifyRequest, reply: FastifyReply, go: () => void | Promise<void>): void | Promise<void> {
    // Counted per IPv4 address, per IPv6 network (a client can rotate through its /64).
    const subject = clientLimitKey(request);
    if (limiter.admitLocally(subject)) return go();
    return failOpen<LimitDecision | undefined>(deps.log, 'redirect-ip', () => limiter.hit(subject), undefined).then((decision) => {
      if (decision && !decision.allowed) {
        reply.headers(rateLimitHeaders(decision));
        return refuse(request, reply, 'redirect_rate_limited');
      }
      return go();
    });
  }

  /** The short URL's query string as the link forwards it ('' for none), without our QR codes' marker. */
  function queryOf(request: Visit, routing: LinkRouting): string {
    if (!routing.forwardQuery) return '';
    const { query } = visitQueryOf(request.url);
    return query === '' ? '' : forwardedQuery(query);
  }

  /** A link that does not redirect now: to its expiredUrl when it has one (no scan), else the refusal. */
  function refuseOrFallBack(request: FastifyRequest, reply: FastifyReply, link: LinkState | undefined, refusal: Refusal): void {
    if (!link?.expiredUrl || refusal === 'not_found') return refuse(request, reply, refusal);
    reply.header('cache-control', 'private, no-store, max-age=0').redirect(withQuery(link.expiredUrl, queryOf(request, routingOf(link))), 302);
  }

  function answer(request: FastifyRequest, reply: FastifyReply, link: LinkState | undefined, ip: string): void | Promise<void> {
    const now = Date.now();
    const refusal = refusalFor(link, now);
    if (refusal || !link) return refuseOrFallBack(request, reply, link, refusal ?? 'not_found');
    // A preview card for link-preview crawlers, the password form: only for links that have one.
    if (usesPageBeforeRedirect(link) && answeredBeforeRedirect(request, reply, link)) return;

    const routing = routingOf(link);
    const [destination, variant] = destinationOf(link, routing, ip, request.headers['user-agent']);
    return send(request, reply, link, routing, destination, variant, ip, now);
  }

  /** Where to, and the A/B variant the scan records: the device's own URL, else the visitor's country's, else the visitor's variant, else the destination. */
  function destinationOf(link: LinkState, routing: LinkRouting, ip: string, userAgent: string | undefined): [string, string | null] {
    const device = deviceUrl(link, platformOf(userAgent));
    if (device !== null || (routing.geo === null && routing.variants === null)) return [device ?? link.destination, null];
    return byCountryOrVariant(link, routing, routing.geo !== null ? deps.countries.of(ip) : null, ip, userAgent);
  }

  /** The country's destination, else the visitor's variant (and its URL, the variant the scan records), else the destination. */
  function byCountryOrVariant(link: LinkState, routing: LinkRouting, country: string | null, ip: string, userAgent: string | undefined): [string, string | null] {
    const byCountry = country !== null && routing.geo !== null ? routing.geo[country] : undefined;
    if (byCountry !== undefined) return [byCountry, null];
    if (routing.variants === null) return [link.destination, null];
    const { url } = variantFor(routing.variants, link.id, ip, userAgent ?? '');
    return [url, url];
  }

  /** Redirects to `target` (forwarding the query as the link says), unless a scan limit refuses it. */
  function send(request: FastifyRequest, reply: FastifyReply, link: LinkState, routing: LinkRouting, destination: string, variant: string | null, ip: string, now: number): void | Promise<void> {
    const target = targetOf(request, routing, destination);
    // HEAD (link checkers, previews, monitors) learns where the link goes; it is not a scan. A
    // limited link's HEAD takes no scan but is refused like GET once none are left.
    if (request.method === 'HEAD') {
      const headRedirect = () => void reply.header('cache-control', 'private, no-store, max-age=0').redirect(target, 302);
      if (link.scanLimit === null) return headRedirect();
      const limit = link.scanLimit;
      return failOpen(deps.log, 'scan-limit', () => deps.scanLimits.hasRoom(link, limit), true).then((room) => (room ? headRedirect() : refuseOrFallBack(request, reply, link, 'scan_limit_reached')));
    }
    // A limited link admits a scan only while it has scans left, whatever the User-Agent: every
    // redirect sends someone to the destination. Redis away, or its counter not seeded in time:
    // let it through; the scan sink still closes the link once its scans are stored.
    const { scanLimit } = link;
    if (scanLimit !== null) {
      return failOpen(deps.log, 'scan-limit', () => deps.scanLimits.admit(link, scanLimit), true).then((admitted) => {
        if (!admitted) return refuseOrFallBack(request, reply, link, 'scan_limit_reached');
        scanAndRedirect(request, reply, link, routing, destination, target, variant, ip, now);
      });
    }
    scanAndRedirect(request, reply, link, routing, destination, target, variant, ip, now);
  }

  /** The link's UTM parameters (those the destination lacks), then the visitor's query. */
  function targetOf(visit: Visit, routing: LinkRouting, destination: string): string {
    return withQuery(routing.utm === null ? destination : withUtm(destination, routing.utm), queryOf(visit, routing));
  }

  /** The scan a redirect to `destination` (the one chosen, without the forwarded query) records. */
  function scanOf(visit: Visit, link: LinkState, destination: string, variant: string | null, ip: string, now: number): RawScan {
    const scanId = randomUUID();
    const { query, trigger } = visitQueryOf(visit.url);
    return {
      scanId,
      clickId: deps.clickIds.sign({ scanId, linkId: link.id, workspaceId: link.workspaceId }),
      workspaceId: link.workspaceId,
      linkId: link.id,
      shortId: link.shortId,
      campaignId: link.campaignId,
      timestamp: now,
      destination,
      ip,
      userAgent: visit.headers['user-agent'] ?? null,
      referrer: visit.headers.referer ?? null,
      query,
      variant,
      trigger,
    };
  }

  /** Records the scan of `destination` and sends the visitor to `target`. */
  function scanAndRedirect(request: FastifyRequest, reply: FastifyReply, link: LinkState, routing: LinkRouting, destination: string, target: string, variant: string | null, ip: string, now: number): void {
    const scan = scanOf(request, link, destination, variant, ip, now);
    request.redirectScan = scan;
    const location = routing.clickId ? withClickId(target, scan.clickId) : target;
    // A browser following a link with pixels gets the page that fires them and then sends it on.
    if (wantsPixelPage(link, request)) return sendPixelPage(reply, location, link.pixels);
    reply
      // Every scan must reach us: no caching of the redirect by browsers or proxies.
      .header('cache-control', 'private, no-store, max-age=0')
      .header('referrer-policy', 'no-referrer-when-downgrade')
      .redirect(location, 302);
  }

  /**
   * GET /:shortId answered on Node's own request event, before Fastify (front-door.ts): the common
   * redirect, whose link is in memory and shows nothing before it (no password, preview card or
   * pixel page), counts no scan limit and is admitted by the IP limit without asking Redis. It
   * answers exactly as the route below would (same headers, scan, metrics); every other request
   * (another method or path, a refusal, a cache miss, a limit to ask) goes to Fastify as before.
   */
  const countRedirect = answerCounter('GET', '/:shortId', 302);
  function redirectBeforeFastify(req: IncomingMessage, res: ServerResponse): boolean {
    const start = performance.now();
    if (req.method !== 'GET') return false;
    const url = req.url ?? '';
    const shortId = shortIdOfPath(url);
    if (shortId === undefined || app.reservedPaths.has(shortId)) return false;
    const domainId = deps.domains.resolve(app.frontDoor.origin.host(req));
    if (domainId === undefined) return false;
    const link = deps.cache.get(domainId === null ? shortId : linkKey(domainId, shortId));
    const now = Date.now();
    if (!link || refusalFor(link, now) !== undefined || usesPageBeforeRedirect(link) || link.scanLimit !== null || link.pixels.length > 0) return false;
    const ip = app.frontDoor.origin.ip(req);
    if (!limiter.admitLocally(limitKeyOf(ip, app.ipv6LimitPrefixLength))) return false;
    const visit: Visit = { url, headers: req.headers };
    const routing = routingOf(link);
    const [destination, variant] = destinationOf(link, routing, ip, req.headers['user-agent']);
    const scan = scanOf(visit, link, destination, variant, ip, now);
    const target = targetOf(visit, routing, destination);
    const location = routing.clickId ? withClickId(target, scan.clickId) : target;
    // A flat list of names and values (no object's keys to walk). Node checks each as it writes it,
    // and would throw on a value it refuses: the names and the other values are ours, and the location
    // is ASCII (destinations are stored as `new URL(...).href`, and Node's parser refuses control and
    // non-ASCII bytes in a request line, so a forwarded query has none either).
    // The request's id, unless the client gave one, is its scan's: a UUID made for it already.
    const headers = ['x-request-id', requestIdOf(req, scan.scanId), 'cache-control', 'private, no-store, max-age=0', 'referrer-policy', 'no-referrer-when-downgrade', 'location', location, 'content-length', '0'];
    res.writeHead(302, headers);
    res.end();
    deps.record(scan);
    countRedirect((performance.now() - start) / 1000);
    return true;
  }
  app.frontDoor.use(redirectBeforeFastify);

  app.get('/:shortId', {
    schema: {
      tags: ['redirect'],
      security: [],
      operationId: 'redirect',
      summary: 'Follow a short link (records a scan)',
      description:
        'Served on the base domain\'s hosts and on verified branded domains (`/api/v1/link-domains`), each its own links; any other Host answers 404. 302 to the destination (or the iOS/Android URL for those devices) with `svc_cid=<click ID>` appended; a browser following a link with `pixels` gets a page that fires them and then redirects (200, below). A link with a preview card (`title`, `description`, `image`) answers link-preview crawlers (facebookexternalhit, Twitterbot, Slackbot, LinkedInBot, WhatsApp, Discordbot, …) with a 200 page of Open Graph and Twitter tags, not a scan. A password-protected link answers a 200 form that posts the password back to this URL (POST /{shortId}), naming nothing of the destination; no scan until the password is given. 404 for an unknown short ID, 410 for an inactive, expired or exhausted link, 429 past 60 redirects per minute per IP. HTML pages, or the JSON error body with `Accept: application/json`.',
      params: Type.Object({ shortId: Type.String({ maxLength: 200 }) }),
      response: REDIRECT_RESPONSES as never,
    },
    // Any answer it does not list is the HTTP server's own; the pixel page is sent as text, past the serializers.
    config: documentOnly({ response: { 200: PIXEL_PAGE_RESPONSE, ...OTHER_ANSWERS } }),
    // After the response is on the wire: journal the scan (published to Kafka from there).
    onResponse: (request, _reply, done) => {
      if (request.redirectScan) deps.record(request.redirectScan);
      else if (request.orphanVisit) deps.record(request.orphanVisit);
      done();
    },
  }, (request, reply) => serve(request, reply, request.params.shortId));

  /** GET /:shortId's answer (also for a link whose ID a root route took later: root-short-links.ts). */
  function serve(request: FastifyRequest, reply: FastifyReply, shortId: string): void | Promise<void> {
    // Not async: a redirect admitted here needs no promise at all (this is the hot path).
    // A host that serves no links (not the base domain, not a verified branded domain): 404, no link looked at.
    const domainId = deps.domains.resolve(request.host);
    if (domainId === undefined) return refuse(request, reply, 'not_found');
    const ip = clientIp(request);
    // Counted per IPv4 address, per IPv6 network (a client can rotate through its /64). Written out
    // here rather than through admitted(): no closure to allocate on the hot path.
    const subject = clientLimitKey(request);
    if (limiter.admitLocally(subject)) return redirect(request, reply, shortId, domainId, ip);
    return failOpen<LimitDecision | undefined>(deps.log, 'redirect-ip', () => limiter.hit(subject), undefined).then((decision) => {
      if (decision && !decision.allowed) {
        reply.headers(rateLimitHeaders(decision));
        return refuse(request, reply, 'redirect_rate_limited');
      }
      return redirect(request, reply, shortId, domainId, ip);
    });
  }

  // GET / on a branded domain with a rootUrl: there (an orphan visit of type base_url); anywhere else the not-found answer, as before.
  app.get('/', {
    schema: {
      tags: ['redirect'],
      security: [],
      operationId: 'domainRoot',
      summary: 'A branded domain\'s root (redirects to its rootUrl)',
      description: 'On a verified branded domain whose `rootUrl` is set (PATCH /api/v1/link-domains/{id}): 302 to it, recorded as an orphan visit of type base_url (GET /api/v1/analytics/orphan-visits), counted against the same 60 redirects per minute per IP. Anywhere else: 404 route_not_found, as for any path the service has no route for.',
      response: {
        302: Type.Null({ description: 'To the domain\'s rootUrl.', headers: { location: Type.String(), 'cache-control': Type.String({ description: 'private, no-store, max-age=0: every visit must reach the service.' }) } }),
        404: { ...ref(ErrorBody), description: 'Not a branded domain with a rootUrl (route_not_found).' },
        429: refusalResponse('More than the allowed redirects per minute from this IP (redirect_rate_limited).', { ...RATE_LIMIT_HEADERS, 'retry-after': Type.Integer({ description: 'Seconds to wait.' }) }),
      } as never,
    },
    config: documentOnly({ response: OTHER_ANSWERS }),
    onResponse: (request, _reply, done) => {
      if (request.orphanVisit) deps.record(request.orphanVisit);
      done();
    },
  }, (request, reply) => {
    const domainId = deps.domains.resolve(request.host);
    const fallbacks = deps.domains.fallbacksOf(domainId ?? null);
    if (!fallbacks?.rootUrl) return reply.callNotFound();
    const { rootUrl } = fallbacks;
    const ip = clientIp(request);
    return admitted(request, reply, () => {
      if (request.method === 'GET') request.orphanVisit = orphanVisitOf(request, domainId!, fallbacks, 'base_url', ip);
      reply.header('cache-control', 'private, no-store, max-age=0').redirect(rootUrl, 302);
    });
  });

  // What browsers and crawlers ask every host for. No short ID can be these names (no dots): without
  // these routes they would be unknown short IDs, sent to a branded domain's notFoundUrl and counted
  // as orphan visits. A plain 404 on every host, no visit, no limit counted, no link looked up.
  for (const [path, operationId] of [['/favicon.ico', 'getFavicon'], ['/robots.txt', 'getRobotsTxt']] as const) {
    app.get(path, {
      schema: {
        tags: ['redirect'],
        security: [],
        operationId,
        summary: `${path} (none: 404)`,
        description: 'On every host, a branded domain\'s too: 404 route_not_found, never a redirect to the domain\'s notFoundUrl, never an orphan visit.',
        response: { 404: { ...ref(ErrorBody), description: 'route_not_found' } },
      },
      config: documentOnly({ response: OTHER_ANSWERS }),
    }, (_request, reply) => reply.callNotFound());
  }

  // POST /:shortId: a protected link's password form posts here.
  await passwordRoute(app, {
    redis: deps.redis,
    log: deps.log,
    passwordHashOf: deps.passwordHashOf,
    domainOf: (host) => deps.domains.resolve(host),
    findLink: (shortId, domainId) => deps.cache.get(linkKey(domainId, shortId)) ?? deps.readThrough.find(shortId, domainId),
    redirect,
    notFound: (request, reply) => refuse(request, reply, 'not_found'),
    record: deps.record,
  });
  return {
    servesLinksOnly: (host) => typeof deps.domains.resolve(host) === 'string',
    exists: async (host, shortId) => {
      const domainId = deps.domains.resolve(host);
      if (domainId === undefined) return false;
      return (deps.cache.get(domainId === null ? shortId : linkKey(domainId, shortId)) ?? await deps.readThrough.find(shortId, domainId)) !== undefined;
    },
    answer: (request, reply, shortId) => {
      // The route's onResponse does not run for another route's request: journal the scan (or a
      // branded domain's orphan visit) on the response's end.
      reply.raw.once('finish', () => {
        if (request.redirectScan) deps.record(request.redirectScan);
        else if (request.orphanVisit) deps.record(request.orphanVisit);
      });
      return serve(request, reply, shortId);
    },
  };
}
