// An orphan visit: a request on a branded domain that named no link, sent on by
// the domain's fallback (its root to rootUrl: base_url; an unknown short ID to
// notFoundUrl: invalid_short_url). The redirect journals it beside the scans
// (the same journal, so the same durability and nothing on the response path);
// the shipper thread enriches it and publishes it to `orphan-visits`, whose sink
// stores it in ClickHouse (orphan_visits).

export const ORPHAN_VISIT_TYPES = ['base_url', 'invalid_short_url'] as const;
export type OrphanVisitType = (typeof ORPHAN_VISIT_TYPES)[number];

/** What the redirect has in hand; `orphanType` tells it from a scan in the journal. */
export interface RawOrphanVisit {
  visitId: string;
  orphanType: OrphanVisitType;
  workspaceId: string;
  domainId: string;
  domain: string;
  /** The request's path (without the query string), at most 200 characters: what the visitor asked for. */
  path: string;
  timestamp: number;
  ip: string;
  userAgent: string | null;
  referrer: string | null;
}

/** The value of an `orphan-visits` message (schemas/orphan-visit.avsc). */
export interface OrphanVisitEvent {
  visitId: string;
  type: OrphanVisitType;
  workspaceId: string;
  domainId: string;
  domain: string;
  path: string;
  timestamp: number;
  country: string | null;
  device: string;
  isBot: boolean;
  referrerHost: string | null;
}

/** Whether a journaled entry is an orphan visit (else a scan). */
export const isOrphanVisit = (entry: object): entry is RawOrphanVisit => 'orphanType' in entry;
