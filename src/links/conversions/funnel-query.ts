// The scan → tracked click → conversion funnel and the conversion series, from
// ClickHouse. Each step counts what happened in the range: scans by scan time,
// tracked clicks and conversions by the time they were reported. A link or
// campaign scope uses the link and campaign recorded with each event.
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { join, sql, type SqlFragment } from '../../platform/clickhouse/literal.ts';
import { bucketSql, bucketStarts, type TimeRange } from '../analytics/time-range.ts';
import type { FunnelType } from './conversion-schemas.ts';

export interface FunnelScope {
  linkId?: string;
  campaignId?: string;
}

const ratio = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000);

function where(workspaceId: string, from: Date, to: Date, scope: FunnelScope): SqlFragment {
  return join(
    [
      sql`workspace_id = ${workspaceId} AND ts >= ${from} AND ts < ${to}`,
      // Ids are stored in their lower-case form; the API accepts either case.
      ...(scope.linkId ? [sql`link_id = ${scope.linkId.toLowerCase()}`] : []),
      ...(scope.campaignId ? [sql`campaign_id = ${scope.campaignId.toLowerCase()}`] : []),
    ],
    ' AND ',
  );
}

export class FunnelQueries {
  constructor(private readonly ch: ClickHouse) {}

  async funnel(workspaceId: string, range: { from: number; to: number }, scope: FunnelScope, includeBots = false): Promise<FunnelType> {
    const from = new Date(range.from);
    const to = new Date(range.to);
    const filter = where(workspaceId, from, to, scope);
    const [scans, steps, revenue] = await Promise.all([
      this.ch.rows<{ scans: string }>(sql`SELECT count() AS scans FROM scans WHERE ${filter}${includeBots ? sql`` : sql` AND is_bot = 0`}`),
      this.ch.rows<{ clicks: string; conversions: string; converted: string }>(sql`
        SELECT uniqExactIf(scan_id, type = 'click') AS clicks, countIf(type = 'conversion') AS conversions,
               uniqExactIf(scan_id, type = 'conversion') AS converted
          FROM conversions WHERE ${filter}`),
      this.ch.rows<{ currency: string; micros: string; conversions: string }>(sql`
        SELECT currency, sum(amount_micros) AS micros, count() AS conversions
          FROM conversions WHERE ${filter} AND type = 'conversion' AND currency != ''
         GROUP BY currency ORDER BY micros DESC, currency`),
    ]);
    const scanCount = Number(scans[0]?.scans ?? 0);
    const s = steps[0] ?? { clicks: '0', conversions: '0', converted: '0' };
    return {
      object: 'funnel',
      from: from.toISOString(),
      to: to.toISOString(),
      linkId: scope.linkId?.toLowerCase() ?? null,
      campaignId: scope.campaignId?.toLowerCase() ?? null,
      scans: scanCount,
      trackedClicks: Number(s.clicks),
      conversions: Number(s.conversions),
      convertedScans: Number(s.converted),
      clickRate: ratio(Number(s.clicks), scanCount),
      conversionRate: ratio(Number(s.converted), scanCount),
      // Sums of integer micro-units: exact, then shown in major units.
      revenue: revenue.map((r) => ({ currency: r.currency, amount: Number(r.micros) / 1_000_000, conversions: Number(r.conversions) })),
    };
  }

  /** Tracked clicks and conversions per bucket of the range, with zeros where nothing happened. */
  async conversionSeries(workspaceId: string, range: TimeRange, scope: FunnelScope): Promise<{ t: string; trackedClicks: number; conversions: number }[]> {
    const rows = await this.ch.rows<{ t: string; clicks: string; conversions: string }>(sql`
      SELECT toUnixTimestamp(${bucketSql('ts', range.interval)}) AS t, uniqExactIf(scan_id, type = 'click') AS clicks, countIf(type = 'conversion') AS conversions
        FROM conversions WHERE ${where(workspaceId, range.from, range.to, scope)} GROUP BY t`);
    const at = new Map(rows.map((r) => [Number(r.t) * 1000, r]));
    return bucketStarts(range).map((t) => ({ t: new Date(t).toISOString(), trackedClicks: Number(at.get(t)?.clicks ?? 0), conversions: Number(at.get(t)?.conversions ?? 0) }));
  }
}
