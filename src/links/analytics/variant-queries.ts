// Scans of A/B test links by variant, from the hourly rollup scans_link_variants
// (migrations/clickhouse/005): only scans sent to a test variant are in it, so
// the rows read are those of A/B links alone. Unique visitors merge the HLL
// sketches, as the other analytics do.
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { inList, sql } from '../../platform/clickhouse/literal.ts';
import type { TimeRange } from './time-range.ts';

export interface VariantScans {
  /** The variant's URL. */
  variant: string;
  scans: number;
  uniqueVisitors: number;
}

/** Scans and visitors per variant over the range, most scans first; `linkIds` narrows it (an empty list matches nothing). */
export async function variantScans(
  ch: ClickHouse,
  workspaceId: string,
  range: Pick<TimeRange, 'from' | 'to'>,
  filter: { linkIds?: string[]; country?: string },
  includeBots: boolean,
): Promise<VariantScans[]> {
  if (filter.linkIds && filter.linkIds.length === 0) return [];
  const rows = await ch.rows<{ variant: string; scans: string; visitors: string }>(sql`
    SELECT variant, countMerge(scans) AS scans, uniqHLL12Merge(visitors) AS visitors
      FROM scans_link_variants
     WHERE workspace_id = ${workspaceId} AND hour >= ${range.from} AND hour < ${range.to} AND is_bot IN ${inList(includeBots ? [0, 1] : [0])}
           ${filter.linkIds ? sql`AND link_id IN ${inList(filter.linkIds)}` : sql``}
           ${filter.country ? sql`AND country = ${filter.country}` : sql``}
     GROUP BY variant ORDER BY scans DESC, variant`);
  return rows.map((r) => ({ variant: r.variant, scans: Number(r.scans), uniqueVisitors: Number(r.visitors) }));
}
