// What the redirect path records about a scan: only what it already has in
// hand. Parsing the User-Agent, the IP's location and the visitor hash are
// added when the scan is shipped (scan-enrichment.ts), off the response path.
// The raw IP stays on the ingress's local disk only until the scan is shipped.
export interface RawScan {
  scanId: string;
  clickId: string;
  workspaceId: string;
  linkId: string;
  shortId: string;
  campaignId: string | null;
  timestamp: number;
  destination: string;
  ip: string;
  userAgent: string | null;
  referrer: string | null;
  /** The query string of the short-link request (its utm_* parameters are kept). */
  query: string;
}
