// Turns a journaled orphan visit into its published event: country from the IP,
// device and bot from the User-Agent, the referrer's host. Runs in the shipper
// thread, as scan enrichment does; the IP goes no further.
import type { Geo } from '../scans/geo.ts';
import { describeVisitor } from '../scans/visitor.ts';
import type { OrphanVisitEvent, RawOrphanVisit } from './orphan-visit.ts';

const NO_QUERY = new URLSearchParams();

export function orphanVisitEnricher(geo: Geo): (raw: RawOrphanVisit) => OrphanVisitEvent {
  return (raw) => {
    // No visitor hash is kept for orphan visits: the salt only makes one.
    const visitor = describeVisitor({ userAgent: raw.userAgent ?? undefined, referrer: raw.referrer ?? undefined, query: NO_QUERY, ip: raw.ip, timestamp: raw.timestamp, salt: '' });
    return {
      visitId: raw.visitId,
      type: raw.orphanType,
      workspaceId: raw.workspaceId,
      domainId: raw.domainId,
      domain: raw.domain,
      path: raw.path,
      timestamp: raw.timestamp,
      country: geo.lookup(raw.ip).country,
      device: visitor.device,
      isBot: visitor.isBot,
      referrerHost: visitor.referrerHost,
    };
  };
}
