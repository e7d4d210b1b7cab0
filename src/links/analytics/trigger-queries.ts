// Scans by how the visitor came (qr or link), from the hourly rollup
// scans_link_triggers (migrations/clickhouse/007): it holds only the scans that
// are not `link`, so the link scans are the total less those.
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { inList, sql } from '../../platform/clickhouse/literal.ts';
import type { ScanTrigger } from '../redirect/qr-marker.ts';
import type { TimeRange } from './time-range.ts';

export interface TriggerScans {
  trigger: ScanTrigger;
  scans: number;
}

/** The QR scans over the range (the rollup's hours), for the same filter as the analytics. */
export async function qrScans(
  ch: ClickHouse,
  workspaceId: string,
  range: Pick<TimeRange, 'from' | 'to'>,
  filter: { linkIds?: string[]; country?: string },
  includeBots: boolean,
): Promise<number> {
  if (filter.linkIds && filter.linkIds.length === 0) return 0;
  const [row] = await ch.rows<{ scans: string }>(sql`
    SELECT sum(scans) AS scans FROM scans_link_triggers
     WHERE workspace_id = ${workspaceId} AND hour >= ${range.from} AND hour < ${range.to} AND is_bot IN ${inList(includeBots ? [0, 1] : [0])}
           AND trigger = 'qr'
           ${filter.linkIds ? sql`AND link_id IN ${inList(filter.linkIds)}` : sql``}
           ${filter.country ? sql`AND country = ${filter.country}` : sql``}`);
  return Number(row?.scans ?? 0);
}

/** Both triggers, link first, from the total and the QR scans (a scan is one or the other). */
export const triggersOf = (totalScans: number, qr: number): TriggerScans[] => [
  { trigger: 'link', scans: Math.max(0, totalScans - qr) },
  { trigger: 'qr', scans: qr },
];
