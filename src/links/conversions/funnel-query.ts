// The scan → tracked click → conversion funnel and the conversion series, from
// ClickHouse. Each step counts what happened in the range: scans by scan time,
// tracked clicks and conversions by the time they were reported (so a rate can
// pass 1 when conversions in the range come from scans before it). Bots are left
// out of every step alike unless asked for: the clicks and conversions of bot
// scans go with the bot scans. A campaign scope means the links in the campaign
// now, as in the scan analytics.
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { inList, join, sql, type SqlFragment } from '../../platform/clickhouse/literal.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { linksMatching } from '../analytics/scan-analytics.ts';
import { domainFilter, domainName } from '../short-links/link-domain.ts';
import { bucketSql, bucketStarts, type TimeRange } from '../analytics/time-range.ts';
import type { FunnelType } from './conversion-schemas.ts';

export interface FunnelScope {
  linkId?: string;
  campaignId?: string;
  /** Only links on this domain: a branded domain's name, or the base domain's host (as the `domain` filter). */
  domain?: string;
}

/** A scope checked against the workspace, with the links it selects (undefined: all of them). */
export interface ResolvedScope {
  linkId: string | null;
  campaignId: string | null;
  /** The domain asked for, as the answer names it; null when not asked. */
  domain: string | null;
  linkIds: string[] | undefined;
}

/** A scope naming a link or campaign the workspace does not have. */
export interface ScopeRefusal {
  reason: 'not_found';
  resource: 'link' | 'campaign';
}

export type ScopeResult = { ok: true; scope: ResolvedScope } | { ok: false; refusal: ScopeRefusal };

const ratio = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000);

/**
 * Conversions (and clicks) whose scan was not a bot's. The conversions table does not carry the
 * flag, so the bot scans among the converted ones are looked up in `scans` (PREWHERE reads the
 * one-byte flag first, then the ids of bot scans only). A scan not stored yet counts as a person's.
 */
function ofPeople(workspaceId: string, conversions: SqlFragment): SqlFragment {
  return sql` AND scan_id NOT IN (
    SELECT scan_id FROM scans PREWHERE is_bot = 1
     WHERE workspace_id = ${workspaceId} AND scan_id IN (SELECT scan_id FROM conversions WHERE ${conversions}))`;
}

/**
 * A conversion or click that still names its scan. An erasure empties the scan ID of its scans'
 * conversions (scan-privacy.ts): they stay conversions (revenue) but are no scan's, so they count
 * toward no converted or clicked scan ('' would otherwise be one more distinct scan).
 */
const hasScan = sql`scan_id != ''`;

/** Sums per currency, summed in two parts (whole units and millionths) so that no Int64 sum can overflow. */
const revenueSums = sql`currency, sum(intDiv(amount_micros, 1000000)) AS units, sum(amount_micros % 1000000) AS millionths, count() AS conversions`;
type RevenueRow = { currency: string; units: string; millionths: string; conversions: string };

/** Revenue per currency, largest first: exact sums of integer micro-units; `amount` is the nearest JSON number, `amountExact` the decimal itself. */
function revenueOf(rows: RevenueRow[]): FunnelType['revenue'] {
  return rows
    .map((r) => ({ currency: r.currency, micros: BigInt(r.units) * 1_000_000n + BigInt(r.millionths), conversions: Number(r.conversions) }))
    .sort((a, b) => (a.micros === b.micros ? (a.currency < b.currency ? -1 : 1) : a.micros > b.micros ? -1 : 1))
    .map(({ currency, micros, conversions }) => {
      const amountExact = microsToDecimal(micros);
      return { currency, amount: Number(amountExact), amountExact, conversions };
    });
}

/** A sum of micro-units (Int64) as an exact decimal string in major units: "15.75", "9999999999.999991". */
export function microsToDecimal(micros: bigint): string {
  const sign = micros < 0n ? '-' : '';
  const abs = micros < 0n ? -micros : micros;
  const fraction = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${sign}${abs / 1_000_000n}${fraction ? `.${fraction}` : ''}`;
}

function where(workspaceId: string, from: Date, to: Date, linkIds: string[] | undefined): SqlFragment {
  return join(
    [
      sql`workspace_id = ${workspaceId} AND ts >= ${from} AND ts < ${to}`,
      // No links selected (a campaign without links) matches nothing.
      ...(linkIds ? [linkIds.length > 0 ? sql`link_id IN ${inList(linkIds)}` : sql`0 = 1`] : []),
    ],
    ' AND ',
  );
}

export class FunnelQueries {
  private readonly ch: ClickHouse;
  private readonly pg: Pool;
  /** The base domain's host: a `domain` scope of it means the links on no branded domain. */
  private readonly baseHost: string | undefined;

  constructor(
    ch: ClickHouse,
    pg: Pool,
    baseHost: string | undefined,
  ) {
    this.ch = ch;
    this.pg = pg;
    this.baseHost = baseHost;
  }

  /**
   * Checks the scope and resolves it to the links it selects, once for any number of queries over it;
   * refused for a link or campaign that is not the workspace's (a link outside the campaign selects nothing).
   */
  async resolveScope(workspaceId: string, scope: FunnelScope): Promise<ScopeResult> {
    const linkIds = await linksMatching(this.pg, workspaceId, { ...scope, domain: domainFilter(scope.domain, this.baseHost) });
    // Nothing selected: tell an unknown id apart from a link and campaign that exist but do not meet.
    if (linkIds?.length === 0) {
      if (scope.linkId && (await this.pg.query('SELECT 1 FROM links WHERE id = $1 AND workspace_id = $2', [scope.linkId, workspaceId])).rowCount === 0) return { ok: false, refusal: { reason: 'not_found', resource: 'link' } };
      if (scope.campaignId && (await this.pg.query('SELECT 1 FROM campaigns WHERE id = $1 AND workspace_id = $2', [scope.campaignId, workspaceId])).rowCount === 0) return { ok: false, refusal: { reason: 'not_found', resource: 'campaign' } };
    }
    // Ids as Postgres writes them: lower case, as ClickHouse holds them.
    return { ok: true, scope: { linkId: scope.linkId?.toLowerCase() ?? null, campaignId: scope.campaignId?.toLowerCase() ?? null, domain: scope.domain === undefined ? null : domainName(scope.domain), linkIds } };
  }

  async funnel(workspaceId: string, range: { from: number; to: number }, scope: ResolvedScope, includeBots = false): Promise<FunnelType> {
    const from = new Date(range.from);
    const to = new Date(range.to);
    const filter = where(workspaceId, from, to, scope.linkIds);
    const converted = includeBots ? filter : sql`${filter}${ofPeople(workspaceId, filter)}`;
    const [scans, steps, revenue, variants] = await Promise.all([
      this.ch.rows<{ scans: string }>(sql`SELECT count() AS scans FROM scans WHERE ${filter}${includeBots ? sql`` : sql` AND is_bot = 0`}`),
      this.ch.rows<{ clicks: string; conversions: string; converted: string }>(sql`
        SELECT uniqExactIf(scan_id, type = 'click' AND ${hasScan}) AS clicks, countIf(type = 'conversion') AS conversions,
               uniqExactIf(scan_id, type = 'conversion' AND ${hasScan}) AS converted
          FROM conversions WHERE ${converted}`),
      this.ch.rows<RevenueRow>(sql`SELECT ${revenueSums} FROM conversions WHERE ${converted} AND type = 'conversion' AND currency != '' GROUP BY currency`),
      this.variantSteps(workspaceId, filter, converted, includeBots),
    ]);
    const scanCount = Number(scans[0]?.scans ?? 0);
    const s = steps[0] ?? { clicks: '0', conversions: '0', converted: '0' };
    return {
      object: 'funnel',
      from: from.toISOString(),
      to: to.toISOString(),
      linkId: scope.linkId,
      campaignId: scope.campaignId,
      domain: scope.domain,
      scans: scanCount,
      trackedClicks: Number(s.clicks),
      conversions: Number(s.conversions),
      convertedScans: Number(s.converted),
      clickRate: ratio(Number(s.clicks), scanCount),
      conversionRate: ratio(Number(s.converted), scanCount),
      revenue: revenueOf(revenue),
      variants,
    };
  }

  /**
   * The funnel's steps per A/B variant: scans by their variant, and clicks and conversions by the
   * variant of their scan (looked up in `scans` for the converted scans only, as ofPeople does),
   * with the revenue of those conversions per currency.
   */
  private async variantSteps(workspaceId: string, filter: SqlFragment, converted: SqlFragment, includeBots: boolean): Promise<FunnelType['variants']> {
    // One row per converted scan on the right, joined with ALL: every conversion of a scan counts (an
    // ANY join keeps one row per key on both sides in newer ClickHouse versions).
    const variantOfConverted = sql`(SELECT scan_id, any(variant) AS scan_variant FROM scans
                           WHERE workspace_id = ${workspaceId} AND variant != '' AND scan_id IN (SELECT scan_id FROM conversions WHERE ${converted})
                           GROUP BY scan_id)`;
    const [scans, steps, revenue] = await Promise.all([
      this.ch.rows<{ variant: string; scans: string }>(sql`
        SELECT variant, count() AS scans FROM scans WHERE ${filter} AND variant != ''${includeBots ? sql`` : sql` AND is_bot = 0`} GROUP BY variant`),
      this.ch.rows<{ variant: string; clicks: string; conversions: string; converted: string }>(sql`
        SELECT scan_variant AS variant, uniqExactIf(scan_id, type = 'click') AS clicks, countIf(type = 'conversion') AS conversions,
               uniqExactIf(scan_id, type = 'conversion') AS converted
          FROM conversions ALL INNER JOIN ${variantOfConverted} USING scan_id
         WHERE ${converted} GROUP BY scan_variant`),
      this.ch.rows<RevenueRow & { variant: string }>(sql`
        SELECT scan_variant AS variant, ${revenueSums} FROM conversions ALL INNER JOIN ${variantOfConverted} USING scan_id
         WHERE ${converted} AND type = 'conversion' AND currency != '' GROUP BY scan_variant, currency`),
    ]);
    const revenueRowsOf = new Map<string, RevenueRow[]>();
    for (const r of revenue) revenueRowsOf.set(r.variant, [...(revenueRowsOf.get(r.variant) ?? []), r]);
    const stepsOf = new Map(steps.map((s) => [s.variant, s]));
    const variants = new Set([...scans.map((s) => s.variant), ...steps.map((s) => s.variant)]);
    const scansOf = new Map(scans.map((s) => [s.variant, Number(s.scans)]));
    return [...variants]
      .map((variant) => {
        const n = scansOf.get(variant) ?? 0;
        const s = stepsOf.get(variant);
        const clicks = Number(s?.clicks ?? 0);
        const convertedScans = Number(s?.converted ?? 0);
        return {
          variant, scans: n, trackedClicks: clicks, conversions: Number(s?.conversions ?? 0), convertedScans,
          clickRate: ratio(clicks, n), conversionRate: ratio(convertedScans, n), revenue: revenueOf(revenueRowsOf.get(variant) ?? []),
        };
      })
      .sort((a, b) => b.scans - a.scans || (a.variant < b.variant ? -1 : 1));
  }

  /** Tracked clicks and conversions per bucket of the range, with zeros where nothing happened. */
  async conversionSeries(workspaceId: string, range: TimeRange, scope: ResolvedScope, includeBots = false): Promise<{ t: string; trackedClicks: number; conversions: number }[]> {
    const filter = where(workspaceId, range.from, range.to, scope.linkIds);
    const rows = await this.ch.rows<{ t: string; clicks: string; conversions: string }>(sql`
      SELECT toUnixTimestamp(${bucketSql('ts', range.interval)}) AS t, uniqExactIf(scan_id, type = 'click' AND ${hasScan}) AS clicks, countIf(type = 'conversion') AS conversions
        FROM conversions WHERE ${filter}${includeBots ? sql`` : ofPeople(workspaceId, filter)} GROUP BY t`);
    const at = new Map(rows.map((r) => [Number(r.t) * 1000, r]));
    return bucketStarts(range).map((t) => ({ t: new Date(t).toISOString(), trackedClicks: Number(at.get(t)?.clicks ?? 0), conversions: Number(at.get(t)?.conversions ?? 0) }));
  }
}
