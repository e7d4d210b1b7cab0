// What the redirect path records about a scan: only what it already has in
// hand. Parsing the User-Agent, the IP's location and the visitor hash are
// added when the scan is shipped (scan-enrichment.ts), off the response path.
// The raw IP stays on the ingress's local disk only until the scan is shipped.
import type { ScanTrigger } from '../redirect/qr-marker.ts';

/** The fields a scan has from the moment of the redirect, kept as they are in the published event. */
export interface ScanIdentity {
  scanId: string;
  clickId: string;
  workspaceId: string;
  linkId: string;
  shortId: string;
  campaignId: string | null;
  timestamp: number;
  destination: string;
  /** The A/B variant (its URL) the visitor was sent to; null when the link has no test or another rule chose. */
  variant?: string | null;
  /** qr: the visitor scanned one of our QR codes (its short URL's marker); link: anything else. Journaled before it existed: link. */
  trigger?: ScanTrigger;
}

export interface RawScan extends ScanIdentity {
  ip: string;
  userAgent: string | null;
  referrer: string | null;
  /** The query string of the short-link request (its utm_* parameters are kept). */
  query: string;
}
