// The body of a `scan.created` webhook request: the scan's fields, with
// `scanId` at the top as the receiver's idempotency key.
import type { ScanEvent } from '../scans/scan-event.ts';

export function scanCreatedBody(scan: ScanEvent): string {
  return JSON.stringify({
    type: 'scan.created',
    scanId: scan.scanId,
    createdAt: new Date(scan.timestamp).toISOString(),
    data: scanCreatedData(scan),
  });
}

/** The scan's fields in a scan.created body (and in a live stream's `scan` event). */
export function scanCreatedData(scan: ScanEvent) {
  return {
    scanId: scan.scanId,
    clickId: scan.clickId,
    workspaceId: scan.workspaceId,
    linkId: scan.linkId,
    shortId: scan.shortId,
    campaignId: scan.campaignId ?? null,
    timestamp: new Date(scan.timestamp).toISOString(),
    destination: scan.destination,
    // The A/B test variant (its URL) the visitor was sent to; null for links without a test.
    variant: scan.variant ?? null,
    // qr: a scan of one of our QR codes; link: any other visit.
    trigger: scan.trigger ?? 'link',
    country: scan.country ?? null,
    region: scan.region ?? null,
    city: scan.city ?? null,
    device: scan.device,
    os: scan.os ?? null,
    browser: scan.browser ?? null,
    referrer: scan.referrer ?? null,
    referrerHost: scan.referrerHost ?? null,
    utm: { source: scan.utmSource ?? null, medium: scan.utmMedium ?? null, campaign: scan.utmCampaign ?? null, term: scan.utmTerm ?? null, content: scan.utmContent ?? null },
    isBot: scan.isBot,
    userAgent: scan.userAgent ?? null,
    visitorId: scan.visitorId,
  };
}
