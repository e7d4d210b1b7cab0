// The marker our QR codes put on a link's short URL (`?qr`), so the redirect
// tells a scan of a printed code from a click on the link. Three bytes keep the
// code small; the redirect takes the marker off before anything sees the query
// (the destination, the recorded scan), so only `trigger` tells of it.

/** Which way a visitor reached the redirect. */
export type ScanTrigger = 'qr' | 'link';

/** The short URL as our QR codes encode it. */
export const withQrMarker = (shortUrl: string): string => `${shortUrl}?qr`;

export interface VisitQuery {
  /** The query string without the marker ('' for none). */
  query: string;
  trigger: ScanTrigger;
}

const NO_QUERY: VisitQuery = { query: '', trigger: 'link' };
const QR_ONLY: VisitQuery = { query: '', trigger: 'qr' };

/** Only a bare `qr` parameter (or `qr=`) is the marker: a destination's own `qr=…` is forwarded as it is. */
const isMarker = (part: string) => part === 'qr' || part === 'qr=';

/** The query string of a short-URL request (after `?`), split into the marker and the rest. */
export function splitQrMarker(raw: string): VisitQuery {
  if (raw === '') return NO_QUERY;
  if (isMarker(raw)) return QR_ONLY;
  // Cheap for the common query without it.
  if (!raw.startsWith('qr') && !raw.includes('&qr')) return { query: raw, trigger: 'link' };
  const parts = raw.split('&');
  const rest = parts.filter((p) => !isMarker(p));
  return rest.length === parts.length ? { query: raw, trigger: 'link' } : { query: rest.join('&'), trigger: 'qr' };
}

/** The query of a request URL (path?query), split as splitQrMarker does. */
export function visitQueryOf(url: string): VisitQuery {
  const queryAt = url.indexOf('?');
  return queryAt === -1 ? NO_QUERY : splitQrMarker(url.slice(queryAt + 1));
}
