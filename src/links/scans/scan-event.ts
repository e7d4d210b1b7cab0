// The value of a `scans` message (schemas/scan.avsc).
export interface ScanEvent {
  scanId: string;
  clickId: string;
  workspaceId: string;
  linkId: string;
  shortId: string;
  campaignId: string | null;
  timestamp: number;
  destination: string;
  country: string | null;
  region: string | null;
  city: string | null;
  device: string;
  os: string | null;
  browser: string | null;
  referrer: string | null;
  referrerHost: string | null;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  utmTerm: string | null;
  utmContent: string | null;
  isBot: boolean;
  userAgent: string | null;
  visitorId: string;
}
