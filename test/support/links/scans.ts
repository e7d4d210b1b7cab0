// Scans a short link through the real redirect, as a phone's browser would.
import type { ClickHouse } from '../../../src/platform/clickhouse/client.ts';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import type { Platform } from '../../../src/platform/platform.ts';
import { scanSinkKind } from '../../../src/links/scans/scan-sink.ts';
import { wireLinks } from '../../../src/links/wiring.ts';
import type { ServiceConfig } from '../../../src/service.ts';
import { freshIp } from '../ingress.ts';

export const DESKTOP_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

/** The scan sink kind as the worker process builds it (closing links at their scan limit). */
export const scanSink = (platform: Platform<ServiceConfig>) => scanSinkKind(platform.clickhouse, platform.pg, wireLinks(platform, platform.config).scanLimits);

/** Follows nothing: the status, Location, click ID (svc_cid) and body of GET /:shortId from a fresh client IP. */
export async function scan(base: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/${path}`, { redirect: 'manual', headers: { 'user-agent': DESKTOP_UA, 'x-forwarded-for': freshIp(), ...headers } });
  const location = res.headers.get('location');
  const clickId = location ? (/[?&]svc_cid=([^#&]+)/.exec(location)?.[1] ?? null) : null;
  return { status: res.status, location, clickId, headers: res.headers, body: await res.text() };
}

/**
 * Whether ClickHouse holds exactly `n` scans of the workspace in the scans
 * table and in every rollup. An insert writes the scans table first and its
 * materialized views after it, so the rollups that analytics read can lag the
 * table for the time of an insert; this waits for all of them: each dims
 * rollup's total, and each visitors rollup's estimate equal to the estimate
 * over the table (merged sketches equal the sketch of the union).
 */
export async function scansStored(clickhouse: ClickHouse, workspaceId: string, n: number): Promise<boolean> {
  const [row] = await clickhouse.rows<Record<string, string>>(sql`
    SELECT (SELECT count() FROM scans WHERE workspace_id = ${workspaceId}) AS scans,
           (SELECT uniqHLL12(visitor_id) FROM scans WHERE workspace_id = ${workspaceId}) AS visitors,
           (SELECT sum(scans) FROM scans_dims WHERE workspace_id = ${workspaceId} AND dim = 'total') AS dims,
           (SELECT sum(scans) FROM scans_country_dims WHERE workspace_id = ${workspaceId} AND dim = 'total') AS country_dims,
           (SELECT sum(scans) FROM scans_link_dims WHERE workspace_id = ${workspaceId} AND dim = 'total') AS link_dims,
           (SELECT sum(scans) FROM scans_link_dims_daily WHERE workspace_id = ${workspaceId} AND dim = 'total') AS link_days,
           (SELECT uniqHLL12Merge(visitors) FROM scans_visitors WHERE workspace_id = ${workspaceId}) AS v,
           (SELECT uniqHLL12Merge(visitors) FROM scans_country_visitors WHERE workspace_id = ${workspaceId}) AS country_v,
           (SELECT uniqHLL12Merge(visitors) FROM scans_link_visitors WHERE workspace_id = ${workspaceId}) AS link_v,
           (SELECT uniqHLL12Merge(visitors) FROM scans_link_visitors_daily WHERE workspace_id = ${workspaceId}) AS link_days_v`);
  const r = row!;
  return [r.scans, r.dims, r.country_dims, r.link_dims, r.link_days].every((x) => Number(x) === n) && [r.v, r.country_v, r.link_v, r.link_days_v].every((x) => x === r.visitors);
}

/** The same for one link: its `n` scans in the scans table and in the link rollups (those carry the link). */
export async function linkScansStored(clickhouse: ClickHouse, linkId: string, n: number): Promise<boolean> {
  const [row] = await clickhouse.rows<Record<string, string>>(sql`
    SELECT (SELECT count() FROM scans WHERE link_id = ${linkId}) AS scans,
           (SELECT uniqHLL12(visitor_id) FROM scans WHERE link_id = ${linkId}) AS visitors,
           (SELECT sum(scans) FROM scans_link_dims WHERE link_id = ${linkId} AND dim = 'total') AS link_dims,
           (SELECT sum(scans) FROM scans_link_dims_daily WHERE link_id = ${linkId} AND dim = 'total') AS link_days,
           (SELECT uniqHLL12Merge(visitors) FROM scans_link_visitors WHERE link_id = ${linkId}) AS link_v,
           (SELECT uniqHLL12Merge(visitors) FROM scans_link_visitors_daily WHERE link_id = ${linkId}) AS link_days_v`);
  const r = row!;
  return [r.scans, r.link_dims, r.link_days].every((x) => Number(x) === n) && [r.link_v, r.link_days_v].every((x) => x === r.visitors);
}
