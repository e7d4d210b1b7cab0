// Scan analytics from ClickHouse, always from hourly or daily rollups kept by
// materialized views on the scans table, so an answer reads rows per hour (or
// day) and value, not per scan (migrations/clickhouse 002, 004):
// - without filters: scans_dims, scans_visitors (by hour);
// - with a country filter: scans_country_* (by hour);
// - with a link filter (linkId, or the links a tag or campaign selects), with
//   or without a country: the whole UTC days of the range from
//   scans_link_*_daily (sorted by link, so only those links' rows are read),
//   the hours before the first and after the last whole day from scans_link_*
//   (by hour, sorted by time), and hourly series from scans_link_* alone.
// The rollups store some groups combined (migrations/clickhouse 006, rollup-rows.ts):
// device, OS and browser (and, in the link rollups, the referrer) as one value,
// the five UTM parameters as one; a scan has exactly one of the first, so those
// rows also give the totals, and, where the rollup's key holds the link or the
// country, the scans per link or country. The ranked query splits them back.
// Counts are exact (each scan is stored once, so the rollups equal counting
// the scans table); unique visitors use HyperLogLog (uniqHLL12: an estimate with
// about 1.6% standard error), merging sketches, which gives the same estimate
// as over the scans themselves.
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { ident, inList, join, sql, SqlFragment } from '../../platform/clickhouse/literal.ts';
import type { AnalyticsType } from './analytics-schemas.ts';
import { bucketSql, bucketStarts, type TimeRange } from './time-range.ts';
import { LINK_LAYOUT, WORKSPACE_LAYOUT, type RollupLayout } from './rollup-rows.ts';
import { variantScans } from './variant-queries.ts';
import { qrScans, triggersOf } from './trigger-queries.ts';

export interface AnalyticsFilter {
  /** Only these links (from linkId, tag or campaign); an empty list matches nothing. */
  linkIds?: string[];
  country?: string;
}

/** Ranked groups, and whether the empty value is ranked (the referrer's: direct). */
const DIMENSIONS = {
  link: { keepEmpty: false },
  country: { keepEmpty: false },
  city: { keepEmpty: false },
  device: { keepEmpty: false },
  os: { keepEmpty: false },
  browser: { keepEmpty: false },
  referrer: { keepEmpty: true },
  utm_source: { keepEmpty: false },
  utm_medium: { keepEmpty: false },
  utm_campaign: { keepEmpty: false },
  utm_term: { keepEmpty: false },
  utm_content: { keepEmpty: false },
} as const;
type Dimension = keyof typeof DIMENSIONS;

type Ranked = { value: string; count: number }[];

export const botValues = (includeBots: boolean) => (includeBots ? inList([0, 1]) : inList([0]));

/** The rows of the hourly rollups (scans_dims, scans_visitors) of a workspace and range. */
const rollupWhere = (workspaceId: string, range: TimeRange, includeBots: boolean) =>
  sql`workspace_id = ${workspaceId} AND hour >= ${range.from} AND hour < ${range.to} AND is_bot IN ${botValues(includeBots)}`;

/** One rollup pair and the condition on its rows; an answer sums over one or more of them (a union of disjoint time spans). */
export interface Piece {
  dims: SqlFragment;
  visitors: SqlFragment;
  /** Its time column, for buckets. */
  time: 'hour' | 'day';
  where: SqlFragment;
  /** How its dims rollup stores a scan's groups. */
  layout: RollupLayout;
  /** The link and country its one-row-a-scan rows also count in, where its key holds them (where not, it stores those groups as rows). */
  keys: { link: boolean; country: boolean };
}

/** A combined value's parts as (group, value) pairs (the groups of its layout, in order). */
const splitInto = (groups: readonly string[]) =>
  `arrayMap((part_group, part) -> tuple(part_group, part), ['${groups.join("', '")}'], arrayResize(splitByChar('\\t', value), ${groups.length}))`;

/**
 * The rows of a piece as ranked (group d, value v, scans): plain rows as they are; combined rows
 * split into their parts, a one-row-a-scan row also counting in its link and country where the
 * piece's key holds them. ClickHouse evaluates every branch of an if for every row, so the
 * workspace's and country's rollups, mostly plain `link` rows, are read in a select per kind of
 * row and only their combined rows split; the link rollups, mostly combined rows, in one (reading
 * them, and matching the link list, once).
 */
function rankedRowsOf(p: Piece, ranked: readonly string[]): SqlFragment {
  const { oneRowAScan, combined } = p.layout;
  const plain = ranked.filter((d) => !Object.values(combined).some((parts) => parts.includes(d)));
  const keyed = [...(p.keys.link ? ["tuple('link', link_id)"] : []), ...(p.keys.country ? ["tuple('country', country)"] : [])];
  const pairsOf = (dim: string) => (dim === oneRowAScan && keyed.length ? `arrayConcat(${splitInto(combined[dim]!)}, [${keyed.join(', ')}])` : splitInto(combined[dim]!));
  // Filtered first: a WHERE beside an ARRAY JOIN would split every row of the granules read.
  const split = (pairs: string, where: SqlFragment) =>
    sql`SELECT pair.1 AS d, pair.2 AS v, scans FROM (SELECT * FROM ${p.dims} WHERE ${where}) ARRAY JOIN ${new SqlFragment(pairs)} AS pair`;
  if (p.keys.link) {
    const branches = Object.keys(combined).map((dim) => `dim = '${dim}', ${pairsOf(dim)}`).join(', ');
    return split(`multiIf(${branches}, [tuple(dim, value)])`, sql`${p.where} AND dim IN ${inList([...plain, ...Object.keys(combined)])}`);
  }
  return join([
    sql`SELECT dim AS d, value AS v, scans FROM ${p.dims} WHERE ${p.where} AND dim IN ${inList(plain)}`,
    ...Object.keys(combined).map((dim) => split(pairsOf(dim), sql`${p.where} AND dim = ${dim}`)),
  ], ' UNION ALL ');
}

const DAY = 86_400_000;

/**
 * The rollups that cover a filter and range. A link filter takes the whole days
 * from the daily link rollups and the hours around them from the hourly ones;
 * `hourly` asks for hourly rows throughout (hourly series).
 */
export function piecesFor(workspaceId: string, range: TimeRange, filter: AnalyticsFilter, includeBots: boolean, hourly: boolean): Piece[] {
  const bots = sql`is_bot IN ${botValues(includeBots)}`;
  const country = filter.country ? sql` AND country = ${filter.country}` : sql``;
  const span = (column: 'hour' | 'day', from: Date, to: Date) => sql`${ident(column)} >= ${from} AND ${ident(column)} < ${to}`;
  if (!filter.linkIds) {
    const where = sql`workspace_id = ${workspaceId} AND ${span('hour', range.from, range.to)} AND ${bots}${country}`;
    return filter.country
      ? [{ dims: ident('scans_country_dims'), visitors: ident('scans_country_visitors'), time: 'hour', where, layout: WORKSPACE_LAYOUT, keys: { link: false, country: true } }]
      : [{ dims: ident('scans_dims'), visitors: ident('scans_visitors'), time: 'hour', where, layout: WORKSPACE_LAYOUT, keys: { link: false, country: false } }];
  }
  const links = sql`link_id IN ${inList(filter.linkIds)}`;
  const linkKeys = { link: true, country: true };
  const hours = (from: Date, to: Date): Piece => ({
    dims: ident('scans_link_dims'), visitors: ident('scans_link_visitors'), time: 'hour',
    where: sql`workspace_id = ${workspaceId} AND ${span('hour', from, to)} AND ${bots} AND ${links}${country}`, layout: LINK_LAYOUT, keys: linkKeys,
  });
  const firstDay = Math.ceil(range.from.getTime() / DAY) * DAY;
  const lastDay = Math.floor(range.to.getTime() / DAY) * DAY;
  if (hourly || firstDay >= lastDay) return [hours(range.from, range.to)];
  const pieces: Piece[] = [{
    dims: ident('scans_link_dims_daily'), visitors: ident('scans_link_visitors_daily'), time: 'day',
    where: sql`workspace_id = ${workspaceId} AND ${links} AND ${span('day', new Date(firstDay), new Date(lastDay))} AND ${bots}${country}`, layout: LINK_LAYOUT, keys: linkKeys,
  }];
  if (range.from.getTime() < firstDay) pieces.push(hours(range.from, new Date(firstDay)));
  if (lastDay < range.to.getTime()) pieces.push(hours(new Date(lastDay), range.to));
  return pieces;
}

/** The rows `select` picks from each piece, as one table to aggregate over. */
export const unionOf = (pieces: Piece[], select: (p: Piece) => SqlFragment) => sql`(${join(pieces.map(select), ' UNION ALL ')})`;

/** Top links name their link by short ID (the workspace's rollups) or by id (the link rollups, under a link filter). */
export type TopLink = ({ shortId: string; linkId?: undefined } | { linkId: string; shortId?: undefined }) & { scans: number };
export type AnalyticsResult = Omit<AnalyticsType, 'topLinks' | 'object'> & { topLinks: TopLink[] };

export class AnalyticsQueries {
  private readonly ch: ClickHouse;

  constructor(ch: ClickHouse) {
    this.ch = ch;
  }

  async summary(workspaceId: string, range: TimeRange, filter: AnalyticsFilter, includeBots: boolean, top: number): Promise<AnalyticsResult> {
    if (filter.linkIds && filter.linkIds.length === 0) return this.empty(range);
    const pieces = piecesFor(workspaceId, range, filter, includeBots, false);
    const seriesPieces = range.interval === 'hour' ? piecesFor(workspaceId, range, filter, includeBots, true) : pieces;

    // Every ranked group in one query (its rows read once, the link list parsed once), the top of each dimension by LIMIT … BY.
    const dimensions = Object.keys(DIMENSIONS) as Dimension[];
    const keptEmpty = dimensions.filter((d) => DIMENSIONS[d].keepEmpty);
    const rankedRows = unionOf(pieces, (p) => rankedRowsOf(p, dimensions));
    const rankedQuery = sql`SELECT d AS dim, v AS value, sum(scans) AS count FROM ${rankedRows}
      WHERE dim IN ${inList(dimensions)} AND (value != '' OR dim IN ${inList(keptEmpty)})
      GROUP BY dim, value ORDER BY dim, count DESC, value LIMIT ${top} BY dim`;

    const bucket = (p: Piece) => sql`toUnixTimestamp(${bucketSql(p.time, range.interval)}) AS t`;
    const seriesQuery = sql`SELECT t, sum(scans) AS scans FROM ${unionOf(seriesPieces, (p) => sql`SELECT ${bucket(p)}, scans FROM ${p.dims} WHERE ${p.where} AND dim = ${p.layout.oneRowAScan}`)} GROUP BY t`;
    // Visitors per bucket and in all (bucket -1) in one pass: the sketches are merged into one per bucket once, and those few again for the total.
    const visitorSketches = unionOf(seriesPieces, (p) => sql`SELECT ${bucket(p)}, visitors FROM ${p.visitors} WHERE ${p.where}`);
    const visitorsQuery = sql`SELECT b AS bucket, uniqHLL12Merge(s) AS visitors
      FROM (SELECT t, uniqHLL12MergeState(visitors) AS s FROM ${visitorSketches} GROUP BY t) ARRAY JOIN [t, -1] AS b GROUP BY b`;

    const [series, visitorRows, rankedAll, variants, qr] = await Promise.all([
      this.ch.rows<{ t: string; scans: string }>(seriesQuery),
      this.ch.rows<{ bucket: string; visitors: string }>(visitorsQuery),
      this.ch.rows<{ dim: Dimension; value: string; count: string }>(rankedQuery),
      variantScans(this.ch, workspaceId, range, filter, includeBots),
      qrScans(this.ch, workspaceId, range, filter, includeBots),
    ]);
    const groups = new Map<Dimension, Ranked>(dimensions.map((d) => [d, []]));
    for (const r of rankedAll) groups.get(r.dim)?.push({ value: r.value, count: Number(r.count) });
    const ranked = (dim: Dimension): Ranked => groups.get(dim)!;
    const [links, countries, cities, devices, os, browsers, referrers] = [ranked('link'), ranked('country'), ranked('city'), ranked('device'), ranked('os'), ranked('browser'), ranked('referrer')];
    const utm = { sources: ranked('utm_source'), mediums: ranked('utm_medium'), campaigns: ranked('utm_campaign'), terms: ranked('utm_term'), contents: ranked('utm_content') };

    const scansAt = new Map(series.map((r) => [Number(r.t) * 1000, Number(r.scans)]));
    const visitorsAt = new Map(visitorRows.filter((r) => Number(r.bucket) >= 0).map((r) => [Number(r.bucket) * 1000, Number(r.visitors)]));
    const allVisitors = visitorRows.find((r) => Number(r.bucket) === -1);
    const timeseries = bucketStarts(range).map((t) => ({ start: new Date(t).toISOString(), scans: scansAt.get(t) ?? 0, uniqueVisitors: visitorsAt.get(t) ?? 0 }));
    const totalScans = series.reduce((n, r) => n + Number(r.scans), 0);
    return {
      from: range.from.toISOString(),
      to: range.to.toISOString(),
      interval: range.interval,
      totalScans,
      uniqueVisitors: Number(allVisitors?.visitors ?? 0),
      timeseries,
      topLinks: links.map((r): TopLink => (filter.linkIds ? { linkId: r.value, scans: r.count } : { shortId: r.value, scans: r.count })),
      countries: countries.map((r) => ({ country: r.value, count: r.count })),
      cities: cities.map((r) => {
        const [country = '', city = ''] = r.value.split('\t');
        return { city, country, count: r.count };
      }).filter((c) => c.city !== ''),
      devices: devices.map((r) => ({ device: r.value, count: r.count })),
      os: os.map((r) => ({ os: r.value, count: r.count })),
      browsers: browsers.map((r) => ({ browser: r.value, count: r.count })),
      referrers: referrers.map((r) => ({ referrer: r.value || '(direct)', count: r.count })),
      utm,
      variants,
      triggers: triggersOf(totalScans, qr),
    };
  }

  /** Scans of every link of the workspace that was scanned in the range, most first (from the rollups). */
  async linkScans(workspaceId: string, range: TimeRange, includeBots: boolean): Promise<{ shortId: string; scans: number }[]> {
    const rows = await this.ch.rows<{ value: string; count: string }>(
      sql`SELECT value, sum(scans) AS count FROM scans_dims WHERE ${rollupWhere(workspaceId, range, includeBots)} AND dim = 'link' AND value != '' GROUP BY value ORDER BY count DESC, value`,
    );
    return rows.map((r) => ({ shortId: r.value, scans: Number(r.count) }));
  }

  /** The `limit` most scanned links of the workspace in the range, and how many links were scanned in all (from the rollups). */
  async topLinkScans(workspaceId: string, range: TimeRange, includeBots: boolean, limit: number): Promise<{ links: { shortId: string; scans: number }[]; scanned: number }> {
    const where = sql`${rollupWhere(workspaceId, range, includeBots)} AND dim = 'link' AND value != ''`;
    const [rows, [count]] = await Promise.all([
      this.ch.rows<{ value: string; count: string }>(sql`SELECT value, sum(scans) AS count FROM scans_dims WHERE ${where} GROUP BY value ORDER BY count DESC, value LIMIT ${limit}`),
      // Every link in the range, as the list above counts them (its values before the LIMIT).
      this.ch.rows<{ n: string }>(sql`SELECT uniqExact(value) AS n FROM scans_dims WHERE ${where}`),
    ]);
    return { links: rows.map((r) => ({ shortId: r.value, scans: Number(r.count) })), scanned: Math.max(rows.length, Number(count?.n ?? 0)) };
  }

  /** Scans by weekday (1 = Monday … 7 = Sunday) and hour of day, in UTC; only cells with scans (from the rollups). */
  async weekdayHourScans(workspaceId: string, range: TimeRange, includeBots: boolean): Promise<{ weekday: number; hour: number; scans: number }[]> {
    const rows = await this.ch.rows<{ weekday: string; hour_of_day: string; count: string }>(
      sql`SELECT toDayOfWeek(hour, 'UTC') AS weekday, toHour(hour, 'UTC') AS hour_of_day, sum(scans) AS count
            FROM scans_dims WHERE ${rollupWhere(workspaceId, range, includeBots)} AND dim = ${WORKSPACE_LAYOUT.oneRowAScan} GROUP BY weekday, hour_of_day`,
    );
    return rows.map((r) => ({ weekday: Number(r.weekday), hour: Number(r.hour_of_day), scans: Number(r.count) }));
  }

  private empty(range: TimeRange): AnalyticsResult {
    return {
      from: range.from.toISOString(), to: range.to.toISOString(), interval: range.interval, totalScans: 0, uniqueVisitors: 0,
      timeseries: bucketStarts(range).map((t) => ({ start: new Date(t).toISOString(), scans: 0, uniqueVisitors: 0 })),
      topLinks: [], countries: [], cities: [], devices: [], os: [], browsers: [], referrers: [],
      utm: { sources: [], mediums: [], campaigns: [], terms: [], contents: [] },
      variants: [],
      triggers: triggersOf(0, 0),
    };
  }
}
