// What a redirect needs of a link beyond its destination, worked out once per
// link state when the cache takes it (LinkCache.apply calls routingOf), so a
// redirect only reads it: whether the query is forwarded and svc_cid added, the
// geo destinations, and the A/B variants as cumulative shares. A link that uses
// none of them shares one PLAIN routing.
import { createHash } from 'node:crypto';
import type { LinkState } from '../changelog/link-state.ts';
import { utmPairs } from '../short-links/utm.ts';

export interface Variant {
  url: string;
  /** The variant takes the visitors whose bucket (0–99) is below this and at or above the previous one's. */
  upTo: number;
}

export interface LinkRouting {
  forwardQuery: boolean;
  clickId: boolean;
  /** Destination by upper-case country code; null for none. */
  geo: Readonly<Record<string, string>> | null;
  variants: readonly Variant[] | null;
  /** UTM parameters to append (name, `name=value`); null for none. */
  utm: readonly (readonly [string, string])[] | null;
}

const PLAIN: LinkRouting = { forwardQuery: true, clickId: true, geo: null, variants: null, utm: null };

const routings = new WeakMap<LinkState, LinkRouting>();

// States written before these fields existed decode without them: their defaults apply.
function compute(link: LinkState): LinkRouting {
  const forwardQuery = link.forwardQuery ?? true;
  const clickId = link.clickId ?? true;
  const geo = link.geo && Object.keys(link.geo).length > 0 ? link.geo : null;
  let variants: Variant[] | null = null;
  if (link.testVariants && link.testVariants.length > 0) {
    let upTo = 0;
    variants = link.testVariants.map((v) => ({ url: v.url, upTo: (upTo += v.percent) }));
  }
  const utm = utmPairs(link.utm);
  if (forwardQuery && clickId && !geo && !variants && !utm) return PLAIN;
  return { forwardQuery, clickId, geo, variants, utm };
}

/** The link's routing, computed on first sight of this state and kept with it. */
export function routingOf(link: LinkState): LinkRouting {
  let routing = routings.get(link);
  if (!routing) {
    routing = compute(link);
    routings.set(link, routing);
  }
  return routing;
}

/**
 * The A/B variant a visitor gets: a hash of the link and the visitor (IP and User-Agent, as the
 * visitor id, but without its daily salt), so the same visitor keeps their variant, across days too.
 */
export function variantFor(variants: readonly Variant[], linkId: string, ip: string, userAgent: string): Variant {
  const bucket = createHash('sha256').update(`${linkId}|${ip}|${userAgent}`).digest().readUInt32BE(0) % 100;
  return variants.find((v) => bucket < v.upTo) ?? variants[variants.length - 1]!;
}

/**
 * The query string of the short-link request as it is forwarded: a visitor's own svc_cid is
 * dropped (the service adds its own), and bytes a Location header may not carry are escaped.
 */
export function forwardedQuery(raw: string): string {
  let query = raw;
  if (query.includes('svc_cid')) query = query.split('&').filter((p) => p !== 'svc_cid' && !p.startsWith('svc_cid=')).join('&');
  query = query.replace(/^&+|&+$/g, '');
  // The URL arrives as Latin-1 text, one character per byte: each such byte is escaped as itself.
  return /[^\x21-\x7e]|#/.test(query) ? query.replace(/[^\x21-\x7e]|#/g, (c) => (c.charCodeAt(0) <= 0xff ? `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}` : encodeURIComponent(c))) : query;
}
