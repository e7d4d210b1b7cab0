// What a redirect decides, shared by the route (redirect-route.ts) and its fast
// path (fast-redirect.ts): whether the link redirects now, where this visitor
// goes, and the scan it records.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { LinkState } from '../changelog/link-state.ts';
import type { ClickIds } from '../scans/click-id.ts';
import type { RawScan } from '../scans/raw-scan.ts';
import { deviceUrl, platformOf, withClickId, withQuery } from './destination.ts';
import { forwardedQuery, variantFor, type LinkRouting } from './link-routing.ts';
import type { Refusal } from './pages.ts';
import type { VisitorCountry } from './visitor-country.ts';

/** Headers of every redirect that records a scan. */
export const SCAN_REDIRECT_HEADERS = {
  // Every scan must reach us: no caching of the redirect by browsers or proxies.
  'cache-control': 'private, no-store, max-age=0',
  'referrer-policy': 'no-referrer-when-downgrade',
} as const;

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

/** Where a visitor goes, and the A/B variant the scan records (null when no test chose it). */
export type Chosen = readonly [destination: string, variant: string | null];

/**
 * The device's own URL, else the visitor's country's, else the visitor's A/B variant, else the
 * destination. A promise only while the IP database is still loading.
 */
export function destinationFor(link: LinkState, routing: LinkRouting, userAgent: string | undefined, ip: string, countries: Pick<VisitorCountry, 'of'>): Chosen | Promise<Chosen> {
  const device = deviceUrl(link, platformOf(userAgent));
  if (device !== null) return [device, null];
  if (routing.geo === null && routing.variants === null) return [link.destination, null];
  if (routing.geo === null) return byCountryOrVariant(link, routing, null, ip, userAgent);
  const country = countries.of(ip);
  if (typeof country === 'object' && country !== null) return country.then((c) => byCountryOrVariant(link, routing, c, ip, userAgent));
  return byCountryOrVariant(link, routing, country, ip, userAgent);
}

function byCountryOrVariant(link: LinkState, routing: LinkRouting, country: string | null, ip: string, userAgent: string | undefined): Chosen {
  const byCountry = country !== null && routing.geo !== null ? routing.geo[country] : undefined;
  if (byCountry !== undefined) return [byCountry, null];
  if (routing.variants === null) return [link.destination, null];
  const { url } = variantFor(routing.variants, link.id, ip, userAgent ?? '');
  return [url, url];
}

/** The short URL's query string as the link forwards it ('' for none). */
export function queryOf(url: string, routing: LinkRouting): string {
  if (!routing.forwardQuery) return '';
  const queryAt = url.indexOf('?');
  return queryAt === -1 ? '' : forwardedQuery(url.slice(queryAt + 1));
}

/** The request a scan is made of. */
export interface ScanRequest {
  url: string;
  headers: IncomingHttpHeaders;
  ip: string;
}

/**
 * The scan of a redirect to `destination` (the one chosen, without the forwarded query) and the
 * Location it answers: `target` (the destination with the forwarded query) with the click ID
 * when the link appends one.
 */
export function scanOf(clickIds: ClickIds, request: ScanRequest, link: LinkState, routing: LinkRouting, chosen: Chosen, target: string, now: number): { scan: RawScan; location: string } {
  const scanId = randomUUID();
  const clickId = clickIds.sign({ scanId, linkId: link.id, workspaceId: link.workspaceId });
  const queryAt = request.url.indexOf('?');
  const scan: RawScan = {
    scanId,
    clickId,
    workspaceId: link.workspaceId,
    linkId: link.id,
    shortId: link.shortId,
    campaignId: link.campaignId,
    timestamp: now,
    destination: chosen[0],
    ip: request.ip,
    userAgent: request.headers['user-agent'] ?? null,
    referrer: request.headers.referer ?? null,
    query: queryAt === -1 ? '' : request.url.slice(queryAt + 1),
    variant: chosen[1],
  };
  return { scan, location: routing.clickId ? withClickId(target, clickId) : target };
}

/** `destination` with the query the link forwards from `url`. */
export const targetOf = (destination: string, url: string, routing: LinkRouting): string => withQuery(destination, queryOf(url, routing));
