// The scan sink: writes scans from the `scans` topic to ClickHouse, each scan
// exactly once (see idempotent-sink.ts for how), through the Null table
// scans_input whose views store them in scans and in every rollup (migration
// 009). Analytics therefore read without FINAL, and the rollups are exact, exact
// enough to hold scan limits to: after each batch the sink closes the links
// that reached theirs (scan-limit-closer.ts).
import type { BatchWorkerKind } from '../../platform/actors/worker-kind.ts';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { idempotentSinkKind } from '../../platform/clickhouse/idempotent-sink.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { SCAN_SINK_FETCH, scansTopic } from '../../../topics/scans.ts';
import type { ScanEvent } from './scan-event.ts';
import type { ScanLimitCloser } from './scan-limit-closer.ts';
import type { ScanPrivacy } from '../privacy/scan-privacy.ts';

/**
 * A scan as a ClickHouse row (absent values as empty strings; DateTime as epoch seconds). ClickHouse
 * compares ids as text, so UUIDs are stored in lower case, as Postgres and the API give them,
 * whatever case another producer of `scans` wrote them in.
 */
export function toScanRow(e: ScanEvent): Record<string, unknown> {
  return {
    scan_id: e.scanId.toLowerCase(),
    click_id: e.clickId,
    workspace_id: e.workspaceId.toLowerCase(),
    link_id: e.linkId.toLowerCase(),
    short_id: e.shortId,
    campaign_id: e.campaignId?.toLowerCase() ?? '',
    ts: Math.floor(e.timestamp / 1000),
    destination: e.destination,
    country: e.country ?? '',
    region: e.region ?? '',
    city: e.city ?? '',
    device: e.device,
    os: e.os ?? '',
    browser: e.browser ?? '',
    referrer: e.referrer ?? '',
    referrer_host: e.referrerHost ?? '',
    utm_source: e.utmSource ?? '',
    utm_medium: e.utmMedium ?? '',
    utm_campaign: e.utmCampaign ?? '',
    utm_term: e.utmTerm ?? '',
    utm_content: e.utmContent ?? '',
    is_bot: e.isBot ? 1 : 0,
    user_agent: e.userAgent ?? '',
    visitor_id: e.visitorId,
    variant: e.variant ?? '',
    // Scans published before the field existed decode with its default; a producer of ours always sets it.
    trigger: e.trigger ?? 'link',
  };
}

/** Where the sink stores scans and how it tells them apart (also what its exactly-once check asks). */
export const SCANS_TABLE = {
  table: 'scans',
  inputTable: 'scans_input',
  tenantColumn: 'workspace_id',
  tenantOf: (e: ScanEvent) => e.workspaceId.toLowerCase(),
  idColumn: 'scan_id',
  idOf: (e: ScanEvent) => e.scanId.toLowerCase(),
};

/**
 * `scanLimits` closes the links whose stored scans reached their limit, after each batch; `privacy`,
 * when given, applies scan erasures and retention beside the sink (scan-privacy.ts).
 */
export function scanSinkKind(clickhouse: ClickHouse, pg: Pool, scanLimits: ScanLimitCloser, privacy?: ScanPrivacy): BatchWorkerKind<ScanEvent> {
  const kind = idempotentSinkKind<ScanEvent>(clickhouse, pg, {
    kind: 'scan-sink',
    topic: scansTopic,
    ...SCANS_TABLE,
    toRow: toScanRow,
    // A whole batch in one insert (at most about 20,000 scans: 8 MiB a partition); the dimension
    // views expand each block at most 6-fold in memory (migration 006), 120,000 rows for 20,000 scans.
    insertChunk: 20_000,
    // ClickHouse's cost is mostly per insert (a part of the table and of each of its nine rollups): fuller fetches.
    fetch: SCAN_SINK_FETCH,
    afterStored: (scans) => scanLimits.afterStored(scans),
  });
  return privacy ? { ...kind, background: privacy.background() } : kind;
}
