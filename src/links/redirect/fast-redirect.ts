// The redirect's common case, answered before Fastify routes it (platform/http/fast-paths.ts):
// a GET of a plain short ID whose link is in the cache and simply redirects now, from a client the
// per-IP limit admits without waiting for Redis. Its answer is the route's own (redirect-route.ts):
// the same decisions (redirect-target.ts), headers, scan and request metrics. Anything else (a
// refusal, a page before the redirect, a scan limit, a link not in memory, HEAD, a path with
// escapes or a trailing slash) it leaves untouched to the route.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastPath, RawClient } from '../../platform/http/fast-paths.ts';
import { recentLimitKey } from '../../platform/http/client-ip.ts';
import type { ReservedPaths } from '../../platform/http/reserved-paths.ts';
import { requestIdOf } from '../../platform/http/server.ts';
import type { BufferedSlidingWindow } from '../../platform/limits/buffered-sliding-window.ts';
import { countRequest } from '../../platform/metrics/http-metrics.ts';
import { linkKey } from '../changelog/link-state.ts';
import type { ServedDomains } from '../domains/served-domains.ts';
import type { ClickIds } from '../scans/click-id.ts';
import type { RawScan } from '../scans/raw-scan.ts';
import { usesPageBeforeRedirect } from './before-redirect.ts';
import type { LinkCache } from './link-cache.ts';
import { routingOf } from './link-routing.ts';
import { wantsPixelPage } from './pixel-page.ts';
import { destinationFor, refusalFor, SCAN_REDIRECT_HEADERS, scanOf, targetOf } from './redirect-target.ts';
import type { VisitorCountry } from './visitor-country.ts';

/** `/<short ID>` and its query: a short ID's own characters (short-id.ts), so nothing to decode. */
const PLAIN_PATH = /^\/([A-Za-z0-9][A-Za-z0-9_-]{2,63})(?:\?|$)/;

export interface FastRedirectDeps {
  cache: Pick<LinkCache, 'get'>;
  domains: Pick<ServedDomains, 'resolve'>;
  /** The route's own per-IP limiter: a redirect counts once, whichever path answers it. */
  limiter: Pick<BufferedSlidingWindow, 'admitLocally'>;
  clickIds: ClickIds;
  countries: Pick<VisitorCountry, 'of'>;
  record: (scan: RawScan) => void;
  /** Paths the server's own routes take (/healthz, /api…): Fastify's router puts them before /:shortId. */
  reservedPaths: Pick<ReservedPaths, 'has'>;
  client: RawClient;
  ipv6LimitPrefixLength: number;
}

export function fastRedirect(deps: FastRedirectDeps): FastPath {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const arrived = performance.now();
    if (req.method !== 'GET') return false;
    const url = req.url ?? '';
    const match = PLAIN_PATH.exec(url);
    if (match === null || deps.reservedPaths.has(match[1]!)) return false;
    const shortId = match[1]!;
    const domainId = deps.domains.resolve(deps.client.host(req));
    if (domainId === undefined) return false;
    const link = deps.cache.get(domainId === null ? shortId : linkKey(domainId, shortId));
    const now = Date.now();
    if (link === undefined || refusalFor(link, now) !== undefined || usesPageBeforeRedirect(link) || link.scanLimit !== null || wantsPixelPage(link, req.headers)) return false;
    const ip = deps.client.ip(req);
    const routing = routingOf(link);
    const chosen = destinationFor(link, routing, req.headers['user-agent'], ip, deps.countries);
    // The IP database is still loading: the route waits for it.
    if (chosen instanceof Promise) return false;
    // Last, since it counts the redirect: nothing after it hands the request to the route.
    if (!deps.limiter.admitLocally(recentLimitKey(ip, deps.ipv6LimitPrefixLength))) return false;
    const { scan, location } = scanOf(deps.clickIds, { url, headers: req.headers, ip }, link, routing, chosen, targetOf(chosen[0], url, routing), now);
    res.writeHead(302, { 'x-request-id': requestIdOf(req.headers), ...SCAN_REDIRECT_HEADERS, location, 'content-length': '0' });
    res.end();
    countRequest('GET', '/:shortId', 302, (performance.now() - arrived) / 1000);
    deps.record(scan);
    return true;
  };
}
