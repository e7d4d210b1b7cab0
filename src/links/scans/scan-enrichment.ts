// Turns a raw scan into the published scan event: location from the IP,
// device/OS/browser and bot from the User-Agent, referrer host, UTM
// parameters, and the daily-salted visitor hash. Runs when the journal ships.
import { createHmac } from 'node:crypto';
import type { Geo } from './geo.ts';
import { describeVisitor } from './visitor.ts';
import type { RawScan } from './raw-scan.ts';
import type { ScanEvent } from './scan-event.ts';

const NO_QUERY = new URLSearchParams();

export function scanEnricher(geo: Geo, secret: string): (raw: RawScan) => ScanEvent {
  const salt = createHmac('sha256', secret).update('visitor-id').digest('hex');
  return (raw) => {
    const visitor = describeVisitor({
      userAgent: raw.userAgent ?? undefined,
      referrer: raw.referrer ?? undefined,
      // Most scans carry no query string: one shared empty one for them.
      query: raw.query === '' ? NO_QUERY : new URLSearchParams(raw.query),
      ip: raw.ip,
      timestamp: raw.timestamp,
      salt,
    });
    const place = geo.lookup(raw.ip);
    // Every field named: in Node 20 an object literal that spreads objects costs several
    // microseconds, and this runs once per scan.
    return {
      scanId: raw.scanId,
      clickId: raw.clickId,
      workspaceId: raw.workspaceId,
      linkId: raw.linkId,
      shortId: raw.shortId,
      campaignId: raw.campaignId,
      timestamp: raw.timestamp,
      destination: raw.destination,
      // Journaled before variants existed: none.
      variant: raw.variant ?? null,
      trigger: raw.trigger ?? 'link',
      country: place.country,
      region: place.region,
      city: place.city,
      device: visitor.device,
      os: visitor.os,
      browser: visitor.browser,
      isBot: visitor.isBot,
      referrer: visitor.referrer,
      referrerHost: visitor.referrerHost,
      utmSource: visitor.utmSource,
      utmMedium: visitor.utmMedium,
      utmCampaign: visitor.utmCampaign,
      utmTerm: visitor.utmTerm,
      utmContent: visitor.utmContent,
      visitorId: visitor.visitorId,
      userAgent: raw.userAgent ? raw.userAgent.slice(0, 500) : null,
    };
  };
}
