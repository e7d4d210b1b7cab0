// Where a scan goes: the device's own URL when the link has one, else the
// destination; with the click ID appended as svc_cid, keeping the existing
// query string and fragment exactly as they were.
import type { LinkState } from '../changelog/link-state.ts';

export type Platform = 'ios' | 'android' | 'other';

export function platformOf(userAgent: string | undefined): Platform {
  if (!userAgent) return 'other';
  if (/\b(iPhone|iPad|iPod)\b/.test(userAgent)) return 'ios';
  if (/\bAndroid\b/.test(userAgent)) return 'android';
  return 'other';
}

/** The device's own URL when the link has one for it, else null. */
export function deviceUrl(link: Pick<LinkState, 'iosUrl' | 'androidUrl'>, platform: Platform): string | null {
  if (platform === 'ios') return link.iosUrl;
  if (platform === 'android') return link.androidUrl;
  return null;
}

export function routeFor(link: Pick<LinkState, 'destination' | 'iosUrl' | 'androidUrl'>, platform: Platform): string {
  if (platform === 'ios' && link.iosUrl) return link.iosUrl;
  if (platform === 'android' && link.androidUrl) return link.androidUrl;
  return link.destination;
}

/** Appends `svc_cid=<clickId>` before the fragment, after any existing query. */
export function withClickId(url: string, clickId: string): string {
  return withQuery(url, `svc_cid=${encodeURIComponent(clickId)}`);
}

/** Appends the UTM pairs whose names the URL's own query does not have, before its fragment. */
export function withUtm(url: string, utm: readonly (readonly [string, string])[]): string {
  const hashAt = url.indexOf('#');
  const queryAt = url.indexOf('?');
  const own = queryAt === -1 || (hashAt !== -1 && hashAt < queryAt) ? '' : url.slice(queryAt + 1, hashAt === -1 ? undefined : hashAt);
  const has = (name: string) => own !== '' && own.split('&').some((p) => p === name || p.startsWith(`${name}=`));
  return withQuery(url, utm.filter(([name]) => !has(name)).map(([, pair]) => pair).join('&'));
}

/** Appends `query` (`a=1&b=2`, may be empty) before the fragment, after any existing query, both kept exactly. */
export function withQuery(url: string, query: string): string {
  if (query === '') return url;
  const hashAt = url.indexOf('#');
  const base = hashAt === -1 ? url : url.slice(0, hashAt);
  const fragment = hashAt === -1 ? '' : url.slice(hashAt);
  const separator = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${separator}${query}${fragment}`;
}
