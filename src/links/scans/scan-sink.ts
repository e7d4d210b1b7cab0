// The scan sink: writes scans from the `scans` topic to ClickHouse, each scan
// exactly once (see idempotent-sink.ts for how), through the Null table
// scans_input whose views store them in scans and in every rollup (migration
// 009). Analytics therefore read without FINAL, and the rollups are exact, exact
// enough to hold scan limits to: after each batch the sink closes the links
// that reached theirs (scan-limit-closer.ts).
import type { BatchWorkerKind } from '../../platform/actors/worker-kind.ts';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { idempotentSinkKind } from '../../platform/clickhouse/idempotent-sink.ts';
import type { Column } from '../../platform/clickhouse/row-binary.ts';
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
export const SCAN_COLUMNS: readonly Column<ScanEvent>[] = [
  { name: 'scan_id', type: 'String', of: (e) => e.scanId.toLowerCase() },
  { name: 'click_id', type: 'String', of: (e) => e.clickId },
  { name: 'workspace_id', type: 'String', of: (e) => e.workspaceId.toLowerCase() },
  { name: 'link_id', type: 'String', of: (e) => e.linkId.toLowerCase() },
  { name: 'short_id', type: 'String', of: (e) => e.shortId },
  { name: 'campaign_id', type: 'String', of: (e) => e.campaignId?.toLowerCase() ?? '' },
  { name: 'ts', type: 'DateTime', of: (e) => Math.floor(e.timestamp / 1000) },
  { name: 'destination', type: 'String', of: (e) => e.destination },
  { name: 'country', type: 'String', of: (e) => e.country ?? '' },
  { name: 'region', type: 'String', of: (e) => e.region ?? '' },
  { name: 'city', type: 'String', of: (e) => e.city ?? '' },
  { name: 'device', type: 'String', of: (e) => e.device },
  { name: 'os', type: 'String', of: (e) => e.os ?? '' },
  { name: 'browser', type: 'String', of: (e) => e.browser ?? '' },
  { name: 'referrer', type: 'String', of: (e) => e.referrer ?? '' },
  { name: 'referrer_host', type: 'String', of: (e) => e.referrerHost ?? '' },
  { name: 'utm_source', type: 'String', of: (e) => e.utmSource ?? '' },
  { name: 'utm_medium', type: 'String', of: (e) => e.utmMedium ?? '' },
  { name: 'utm_campaign', type: 'String', of: (e) => e.utmCampaign ?? '' },
  { name: 'utm_term', type: 'String', of: (e) => e.utmTerm ?? '' },
  { name: 'utm_content', type: 'String', of: (e) => e.utmContent ?? '' },
  { name: 'is_bot', type: 'UInt8', of: (e) => (e.isBot ? 1 : 0) },
  { name: 'user_agent', type: 'String', of: (e) => e.userAgent ?? '' },
  { name: 'visitor_id', type: 'String', of: (e) => e.visitorId },
  { name: 'variant', type: 'String', of: (e) => e.variant ?? '' },
  // Scans published before the field existed decode with its default; a producer of ours always sets it.
  { name: 'trigger', type: 'String', of: (e) => e.trigger ?? 'link' },
];

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
    columns: SCAN_COLUMNS,
    // A whole batch in one insert (at most about 20,000 scans: 8 MiB a partition); the dimension
    // views expand each block at most 6-fold in memory (migration 006), 120,000 rows for 20,000 scans.
    insertChunk: 20_000,
    // ClickHouse's cost is mostly per insert (a part of the table and of each of its nine rollups): fuller fetches.
    fetch: SCAN_SINK_FETCH,
    afterStored: (scans) => scanLimits.afterStored(scans),
  });
  return privacy ? { ...kind, background: privacy.background() } : kind;
}
