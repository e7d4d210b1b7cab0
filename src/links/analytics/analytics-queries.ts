// Scan analytics from ClickHouse. Without filters, answers come from the hourly
// rollups (scans_dims, scans_visitors), which stay small however many scans a
// workspace has; with a link, tag, campaign or country filter they come from
// the scans table itself. Both are exact for scans (each scan is stored once);
// unique visitors use HyperLogLog (uniqHLL12: an estimate with about 1.6% standard error).
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { inList, join, sql, SqlFragment } from '../../platform/clickhouse/literal.ts';
import type { AnalyticsType } from './analytics-schemas.ts';
import { bucketSql, bucketStarts, type TimeRange } from './time-range.ts';

export interface AnalyticsFilter {
  /** Only these links (from linkId, tag or campaign); an empty list matches nothing. */
  linkIds?: string[];
  country?: string;
}

/** Ranked groups: their rollup dimension and their expression on the scans table. */
const DIMENSIONS = {
  link: { raw: 'short_id', keepEmpty: false },
  country: { raw: 'country', keepEmpty: false },
  city: { raw: "if(city = '', '', concat(country, '\\t', city))", keepEmpty: false },
  device: { raw: 'device', keepEmpty: false },
  os: { raw: 'os', keepEmpty: false },
  browser: { raw: 'browser', keepEmpty: false },
  referrer: { raw: 'referrer_host', keepEmpty: true },
  utm_source: { raw: 'utm_source', keepEmpty: false },
  utm_medium: { raw: 'utm_medium', keepEmpty: false },
  utm_campaign: { raw: 'utm_campaign', keepEmpty: false },
  utm_term: { raw: 'utm_term', keepEmpty: false },
  utm_content: { raw: 'utm_content', keepEmpty: false },
} as const;
type Dimension = keyof typeof DIMENSIONS;

type Ranked = { value: string; count: number }[];

const botValues = (includeBots: boolean) => (includeBots ? inList([0, 1]) : inList([0]));

/** The rows of the hourly rollups (scans_dims, scans_visitors) of a workspace and range. */
const rollupWhere = (workspaceId: string, range: TimeRange, includeBots: boolean) =>
  sql`workspace_id = ${workspaceId} AND hour >= ${range.from} AND hour < ${range.to} AND is_bot IN ${botValues(includeBots)}`;

export type AnalyticsResult = Omit<AnalyticsType, 'topLinks' | 'object'> & { topLinks: { shortId: string; scans: number }[] };

export class AnalyticsQueries {
  constructor(private readonly ch: ClickHouse) {}

  async summary(workspaceId: string, range: TimeRange, filter: AnalyticsFilter, includeBots: boolean, top: number): Promise<AnalyticsResult> {
    if (filter.linkIds && filter.linkIds.length === 0) return this.empty(range);
    const useRollup = !filter.linkIds && !filter.country;
    const where = useRollup
      ? rollupWhere(workspaceId, range, includeBots)
      : join(
          [
            sql`workspace_id = ${workspaceId} AND ts >= ${range.from} AND ts < ${range.to} AND is_bot IN ${botValues(includeBots)}`,
            ...(filter.linkIds ? [sql`link_id IN ${inList(filter.linkIds)}`] : []),
            ...(filter.country ? [sql`country = ${filter.country}`] : []),
          ],
          ' AND ',
        );

    const ranked = (dim: Dimension): Promise<Ranked> => {
      const { raw, keepEmpty } = DIMENSIONS[dim];
      const nonEmpty = keepEmpty ? sql`` : sql` AND value != ''`;
      const query = useRollup
        ? sql`SELECT value, sum(scans) AS count FROM scans_dims WHERE ${where} AND dim = ${dim}${nonEmpty} GROUP BY value ORDER BY count DESC, value LIMIT ${top}`
        : sql`SELECT ${new SqlFragment(raw)} AS value, count() AS count FROM scans WHERE ${where}${keepEmpty ? sql`` : sql` AND ${new SqlFragment(raw)} != ''`} GROUP BY value ORDER BY count DESC, value LIMIT ${top}`;
      return this.ch.rows<{ value: string; count: string }>(query).then((rows) => rows.map((r) => ({ value: r.value, count: Number(r.count) })));
    };

    const bucket = bucketSql(useRollup ? 'hour' : 'ts', range.interval);
    const seriesQuery = useRollup
      ? sql`SELECT toUnixTimestamp(${bucket}) AS t, sum(scans) AS scans FROM scans_dims WHERE ${where} AND dim = 'total' GROUP BY t`
      : sql`SELECT toUnixTimestamp(${bucket}) AS t, count() AS scans, uniqHLL12(visitor_id) AS visitors FROM scans WHERE ${where} GROUP BY t`;
    const visitorsQuery = useRollup
      ? sql`SELECT toUnixTimestamp(${bucket}) AS t, uniqHLL12Merge(visitors) AS visitors FROM scans_visitors WHERE ${where} GROUP BY t`
      : undefined;
    const uniqueQuery = useRollup
      ? sql`SELECT uniqHLL12Merge(visitors) AS visitors FROM scans_visitors WHERE ${where}`
      : sql`SELECT uniqHLL12(visitor_id) AS visitors FROM scans WHERE ${where}`;

    const [series, visitorSeries, unique, links, countries, cities, devices, os, browsers, referrers, sources, mediums, campaigns, terms, contents] = await Promise.all([
      this.ch.rows<{ t: string; scans: string; visitors?: string }>(seriesQuery),
      visitorsQuery ? this.ch.rows<{ t: string; visitors: string }>(visitorsQuery) : Promise.resolve(undefined),
      this.ch.rows<{ visitors: string }>(uniqueQuery),
      ranked('link'),
      ranked('country'),
      ranked('city'),
      ranked('device'),
      ranked('os'),
      ranked('browser'),
      ranked('referrer'),
      ranked('utm_source'),
      ranked('utm_medium'),
      ranked('utm_campaign'),
      ranked('utm_term'),
      ranked('utm_content'),
    ]);

    const scansAt = new Map(series.map((r) => [Number(r.t) * 1000, Number(r.scans)]));
    const visitorsAt = new Map((visitorSeries ?? series).map((r) => [Number(r.t) * 1000, Number(r.visitors ?? 0)]));
    const timeseries = bucketStarts(range).map((t) => ({ start: new Date(t).toISOString(), scans: scansAt.get(t) ?? 0, uniqueVisitors: visitorsAt.get(t) ?? 0 }));
    return {
      from: range.from.toISOString(),
      to: range.to.toISOString(),
      interval: range.interval,
      totalScans: series.reduce((n, r) => n + Number(r.scans), 0),
      uniqueVisitors: Number(unique[0]?.visitors ?? 0),
      timeseries,
      topLinks: links.map((r) => ({ shortId: r.value, scans: r.count })),
      countries: countries.map((r) => ({ country: r.value, count: r.count })),
      cities: cities.map((r) => {
        const [country = '', city = ''] = r.value.split('\t');
        return { city, country, count: r.count };
      }).filter((c) => c.city !== ''),
      devices: devices.map((r) => ({ device: r.value, count: r.count })),
      os: os.map((r) => ({ os: r.value, count: r.count })),
      browsers: browsers.map((r) => ({ browser: r.value, count: r.count })),
      referrers: referrers.map((r) => ({ referrer: r.value || '(direct)', count: r.count })),
      utm: { sources, mediums, campaigns, terms, contents },
    };
  }

  /** Scans of every link of the workspace that was scanned in the range, most first (from the rollups). */
  async linkScans(workspaceId: string, range: TimeRange, includeBots: boolean): Promise<{ shortId: string; scans: number }[]> {
    const rows = await this.ch.rows<{ value: string; count: string }>(
      sql`SELECT value, sum(scans) AS count FROM scans_dims WHERE ${rollupWhere(workspaceId, range, includeBots)} AND dim = 'link' AND value != '' GROUP BY value ORDER BY count DESC, value`,
    );
    return rows.map((r) => ({ shortId: r.value, scans: Number(r.count) }));
  }

  /** Scans by weekday (1 = Monday … 7 = Sunday) and hour of day, in UTC; only cells with scans (from the rollups). */
  async weekdayHourScans(workspaceId: string, range: TimeRange, includeBots: boolean): Promise<{ weekday: number; hour: number; scans: number }[]> {
    const rows = await this.ch.rows<{ weekday: string; hour_of_day: string; count: string }>(
      sql`SELECT toDayOfWeek(hour, 'UTC') AS weekday, toHour(hour, 'UTC') AS hour_of_day, sum(scans) AS count
            FROM scans_dims WHERE ${rollupWhere(workspaceId, range, includeBots)} AND dim = 'total' GROUP BY weekday, hour_of_day`,
    );
    return rows.map((r) => ({ weekday: Number(r.weekday), hour: Number(r.hour_of_day), scans: Number(r.count) }));
  }

  private empty(range: TimeRange): AnalyticsResult {
    return {
      from: range.from.toISOString(), to: range.to.toISOString(), interval: range.interval, totalScans: 0, uniqueVisitors: 0,
      timeseries: bucketStarts(range).map((t) => ({ start: new Date(t).toISOString(), scans: 0, uniqueVisitors: 0 })),
      topLinks: [], countries: [], cities: [], devices: [], os: [], browsers: [], referrers: [],
      utm: { sources: [], mediums: [], campaigns: [], terms: [], contents: [] },
    };
  }
}
