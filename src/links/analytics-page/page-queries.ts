// What an analytics page of links shows, from the same rollups and pieces as the
// analytics API (analytics-queries.ts: whole days from the daily link rollups,
// the hours around them and hourly series from the hourly ones), but only what
// the page shows, read the cheaper way:
// - the ranked groups from the link rollups' `visit` rows alone (one a scan:
//   device, OS, browser and referrer host, the country in the key), summed by
//   country and value first, so only the distinct combinations are split into
//   their parts (the API splits every row: for a link of a million scans, about
//   four times the work);
// - A/B variants by scans only: their visitors' sketches, one per hour, country
//   and variant, were most of the page's time (bench/analytics-page.bench.ts);
// - unique visitors in all, not per bucket.
// The numbers are the API's (tested: analytics-pages.test.ts).
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { inList, sql } from '../../platform/clickhouse/literal.ts';
import { botValues, piecesFor, unionOf, type AnalyticsResult } from '../analytics/analytics-queries.ts';
import { LINK_LAYOUT } from '../analytics/rollup-rows.ts';
import { bucketSql, bucketStarts, type TimeRange } from '../analytics/time-range.ts';
import { qrScans, triggersOf, type TriggerScans } from '../analytics/trigger-queries.ts';

type Ranked = { value: string; count: number }[];

/** What a page shows. */
export interface PageResult {
  totalScans: number;
  uniqueVisitors: number;
  timeseries: { start: number; scans: number }[];
  countries: Ranked;
  devices: Ranked;
  browsers: Ranked;
  /** Hosts, `(direct)` for none. */
  referrers: Ranked;
  variants: Ranked;
  triggers: TriggerScans[];
}

/** The parts of a link rollup's `visit` value, in LINK_LAYOUT's order, by the group the page ranks. */
const PART = { device: 1, browser: 3, referrer: 4 } as const;
const TOP = 10;

/** The API's answer as a page shows it (the workspace's page: every link, from the workspace's rollups). */
export function pageResultOf(result: AnalyticsResult): PageResult {
  const ranked = <T>(xs: T[], value: (x: T) => string, count: (x: T) => number): Ranked => xs.map((x) => ({ value: value(x), count: count(x) }));
  return {
    totalScans: result.totalScans,
    uniqueVisitors: result.uniqueVisitors,
    timeseries: result.timeseries.map((b) => ({ start: Date.parse(b.start), scans: b.scans })),
    countries: ranked(result.countries, (c) => c.country, (c) => c.count),
    devices: ranked(result.devices, (d) => d.device, (d) => d.count),
    browsers: ranked(result.browsers, (b) => b.browser, (b) => b.count),
    referrers: ranked(result.referrers, (r) => r.referrer, (r) => r.count),
    variants: ranked(result.variants, (v) => v.variant, (v) => v.scans),
    triggers: result.triggers,
  };
}

/** A page of some links' scans (bots left out) over a range. */
export async function linkPageResult(ch: ClickHouse, workspaceId: string, range: TimeRange, linkIds: string[]): Promise<PageResult> {
  const filter = { linkIds };
  const pieces = piecesFor(workspaceId, range, filter, false, false);
  const seriesPieces = range.interval === 'hour' ? piecesFor(workspaceId, range, filter, false, true) : pieces;
  const visit = LINK_LAYOUT.oneRowAScan;
  const part = (n: number) => sql`arrayElement(splitByChar('\\t', value), ${n})`;
  const ranked = sql`SELECT pair.1 AS d, pair.2 AS v, sum(s) AS n
      FROM (SELECT country, value, sum(scans) AS s FROM ${unionOf(pieces, (p) => sql`SELECT country, value, scans FROM ${p.dims} WHERE ${p.where} AND dim = ${visit}`)} GROUP BY country, value)
     ARRAY JOIN [('country', country), ('device', ${part(PART.device)}), ('browser', ${part(PART.browser)}), ('referrer', ${part(PART.referrer)})] AS pair
     WHERE v != '' OR d = 'referrer'
     GROUP BY d, v ORDER BY d, n DESC, v LIMIT ${TOP} BY d`;
  const series = sql`SELECT t, sum(scans) AS scans FROM ${unionOf(seriesPieces, (p) => sql`SELECT toUnixTimestamp(${bucketSql(p.time, range.interval)}) AS t, scans FROM ${p.dims} WHERE ${p.where} AND dim = ${visit}`)} GROUP BY t`;
  const visitors = sql`SELECT uniqHLL12Merge(visitors) AS visitors FROM ${unionOf(pieces, (p) => sql`SELECT visitors FROM ${p.visitors} WHERE ${p.where}`)}`;
  const variants = sql`SELECT variant, countMerge(scans) AS scans FROM scans_link_variants
     WHERE workspace_id = ${workspaceId} AND hour >= ${range.from} AND hour < ${range.to} AND is_bot IN ${botValues(false)} AND link_id IN ${inList(linkIds)}
     GROUP BY variant ORDER BY scans DESC, variant LIMIT ${TOP}`;
  const [rankedRows, seriesRows, visitorRows, variantRows, qr] = await Promise.all([
    ch.rows<{ d: string; v: string; n: string }>(ranked),
    ch.rows<{ t: string; scans: string }>(series),
    ch.rows<{ visitors: string }>(visitors),
    ch.rows<{ variant: string; scans: string }>(variants),
    qrScans(ch, workspaceId, range, filter, false),
  ]);
  const group = (d: string): Ranked => rankedRows.filter((r) => r.d === d).map((r) => ({ value: d === 'referrer' && r.v === '' ? '(direct)' : r.v, count: Number(r.n) }));
  const scansAt = new Map(seriesRows.map((r) => [Number(r.t) * 1000, Number(r.scans)]));
  const totalScans = seriesRows.reduce((n, r) => n + Number(r.scans), 0);
  return {
    totalScans,
    uniqueVisitors: Number(visitorRows[0]?.visitors ?? 0),
    timeseries: bucketStarts(range).map((t) => ({ start: t, scans: scansAt.get(t) ?? 0 })),
    countries: group('country'),
    devices: group('device'),
    browsers: group('browser'),
    referrers: group('referrer'),
    variants: variantRows.map((r) => ({ value: r.variant, count: Number(r.scans) })),
    triggers: triggersOf(totalScans, qr),
  };
}
