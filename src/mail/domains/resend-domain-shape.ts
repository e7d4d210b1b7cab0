// A sending domain in Resend's shape (GET /domains/:id at the root), and how
// Resend's tracking switches map onto ours. Tracking here is one switch: a domain
// tracks opens and clicks when it has a tracking host, which Resend names by its
// subdomain (`tracking_subdomain`); open_tracking and click_tracking are answered
// from it and, when given, must agree with each other.
import { ApiError } from '../../platform/http/errors.ts';
import { dnsRecords } from './dns-records.ts';
import type { DomainRow } from './domains.ts';

export const RESEND_REGIONS = ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'] as const;

/** Resend's DKIM record, named relative to the domain as Resend lists it. */
function resendRecords(row: DomainRow) {
  return dnsRecords(row).map((r) => ({
    record: 'DKIM' as const,
    name: r.name.slice(0, -(row.name.length + 1)),
    type: r.type,
    ttl: 'Auto',
    status: row.status,
    value: r.value,
  }));
}

/** The domain as Resend answers it; `records` on a single domain, not in lists. */
export function toResendDomain(row: DomainRow, withRecords: boolean) {
  const subdomain = row.tracking_host?.endsWith(`.${row.name}`) ? row.tracking_host.slice(0, -(row.name.length + 1)) : row.tracking_host;
  return {
    object: 'domain' as const,
    id: row.id,
    name: row.name,
    status: row.status,
    created_at: row.created_at.toISOString(),
    region: row.region,
    capabilities: { sending: 'enabled' as const, receiving: 'disabled' as const },
    open_tracking: row.tracking_host !== null,
    click_tracking: row.tracking_host !== null,
    tracking_subdomain: subdomain,
    ...(withRecords ? { records: resendRecords(row) } : {}),
  };
}

export interface TrackingChange {
  open_tracking?: boolean;
  click_tracking?: boolean;
  tracking_subdomain?: string;
}

/**
 * The tracking host after `change` (current: the domain's host now, null for a new domain), or a 422.
 * Turned on without a subdomain, tracking uses `serviceHost` (PUBLIC_BASE_URL's host).
 */
export function trackingHostAfter(domainName: string, current: string | null, change: TrackingChange, serviceHost: string): string | null {
  const { open_tracking: open, click_tracking: click, tracking_subdomain: subdomain } = change;
  if (open !== undefined && click !== undefined && open !== click) {
    throw new ApiError(422, 'tracking_split_not_supported', 'Opens and clicks are tracked together here: give open_tracking and click_tracking the same value.', [{ path: '/click_tracking', message: 'must equal open_tracking' }]);
  }
  const wanted = open ?? click;
  if (wanted === false) return null;
  if (subdomain !== undefined) return `${subdomain.toLowerCase()}.${domainName}`;
  // Resend turns tracking on without a custom tracking domain: the links then point at this service's own host.
  if (wanted === true && current === null) return serviceHost;
  return current;
}
