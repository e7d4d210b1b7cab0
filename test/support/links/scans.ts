// Scans a short link through the real redirect, as a phone's browser would.
import type { ClickHouse } from '../../../src/platform/clickhouse/client.ts';
import { ident, join, sql, type SqlFragment } from '../../../src/platform/clickhouse/literal.ts';
import type { Platform } from '../../../src/platform/platform.ts';
import { scanSinkKind } from '../../../src/links/scans/scan-sink.ts';
import { conversionSinkKind } from '../../../src/links/conversions/conversion-sink.ts';
import { hostWorkers } from '../../../src/platform/actors/host.ts';
import { wireLinks } from '../../../src/links/wiring.ts';
import type { ServiceConfig } from '../../../src/service.ts';
import { freshIp } from '../ingress.ts';
import { LINK_LAYOUT, WORKSPACE_LAYOUT } from '../../../src/links/analytics/rollup-rows.ts';

export const DESKTOP_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

/** The scan sink kind as the worker process builds it (closing links at their scan limit). */
export const scanSink = (platform: Platform<ServiceConfig>) => scanSinkKind(platform.clickhouse, platform.pg, wireLinks(platform, platform.config).scanLimits);

/** Hosts the scan sink (and, if asked, the conversion sink) in this process; resolves to what stops them. */
export async function hostSinks(platform: Platform<ServiceConfig>, options: { conversions?: boolean } = {}): Promise<() => Promise<void>> {
  const runtimes = await hostWorkers(platform, [scanSink(platform), ...(options.conversions ? [conversionSinkKind(platform.clickhouse, platform.pg)] : [])]);
  return async () => {
    for (const r of runtimes) await r.stop();
  };
}

/** Follows nothing: the status, Location, click ID (svc_cid) and body of GET /:shortId from a fresh client IP. */
export async function scan(base: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/${path}`, { redirect: 'manual', headers: { 'user-agent': DESKTOP_UA, 'x-forwarded-for': freshIp(), ...headers } });
  const location = res.headers.get('location');
  const clickId = location ? (/[?&]svc_cid=([^#&]+)/.exec(location)?.[1] ?? null) : null;
  return { status: res.status, location, clickId, headers: res.headers, body: await res.text() };
}

// The rollups that carry a link's id, and those of the whole workspace.
// Each dims rollup with the rows that count every scan once (rollup-rows.ts).
const LINK_ROLLUPS = {
  dims: [['scans_link_dims', LINK_LAYOUT.oneRowAScan], ['scans_link_dims_daily', LINK_LAYOUT.oneRowAScan]] as [string, string][],
  visitors: ['scans_link_visitors', 'scans_link_visitors_daily'],
};
const WORKSPACE_ROLLUPS = {
  dims: [['scans_dims', WORKSPACE_LAYOUT.oneRowAScan], ['scans_country_dims', WORKSPACE_LAYOUT.oneRowAScan], ...LINK_ROLLUPS.dims] as [string, string][],
  visitors: ['scans_visitors', 'scans_country_visitors', ...LINK_ROLLUPS.visitors],
};

/**
 * Whether ClickHouse holds exactly `n` of the scans `where` picks in the scans table and in each of
 * `rollups`. An insert writes the scans table first and its materialized views after it, so the
 * rollups that analytics read can lag the table for the time of an insert; this waits for all of
 * them: each dims rollup's total, and each visitors rollup's estimate equal to the estimate over the
 * table (merged sketches equal the sketch of the union).
 */
async function storedEverywhere(clickhouse: ClickHouse, where: SqlFragment, rollups: typeof LINK_ROLLUPS, n: number): Promise<boolean> {
  const totals = rollups.dims.map(([t, dim]) => sql`(SELECT sum(scans) FROM ${ident(t)} WHERE ${where} AND dim = ${dim})`);
  const sketches = rollups.visitors.map((t) => sql`(SELECT uniqHLL12Merge(visitors) FROM ${ident(t)} WHERE ${where})`);
  const [row] = await clickhouse.rows<{ scans: string; visitors: string; totals: string[]; sketches: string[] }>(sql`
    SELECT (SELECT count() FROM scans WHERE ${where}) AS scans,
           (SELECT uniqHLL12(visitor_id) FROM scans WHERE ${where}) AS visitors,
           [${join(totals, ', ')}] AS totals,
           [${join(sketches, ', ')}] AS sketches`);
  const r = row!;
  return [r.scans, ...r.totals].every((x) => Number(x) === n) && r.sketches.every((x) => Number(x) === Number(r.visitors));
}

/** Whether the workspace's `n` scans are in the scans table and in every rollup. */
export const scansStored = (clickhouse: ClickHouse, workspaceId: string, n: number): Promise<boolean> =>
  storedEverywhere(clickhouse, sql`workspace_id = ${workspaceId}`, WORKSPACE_ROLLUPS, n);

/** Whether the link's `n` scans are in the scans table and in the rollups that carry the link. */
export const linkScansStored = (clickhouse: ClickHouse, linkId: string, n: number): Promise<boolean> =>
  storedEverywhere(clickhouse, sql`link_id = ${linkId}`, LINK_ROLLUPS, n);
