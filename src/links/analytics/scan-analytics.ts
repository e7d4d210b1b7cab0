// The workspace scan analytics as every entry point answers them (REST and MCP):
// the link, tag and campaign filters resolved to link ids in Postgres, the
// summary from ClickHouse, and the top links given their ids.
import type { Pool } from '../../platform/postgres/pool.ts';
import type { AnalyticsFilter, AnalyticsQueries, AnalyticsResult } from './analytics-queries.ts';
import type { TimeRange } from './time-range.ts';

export interface AnalyticsScope {
  linkId?: string;
  tag?: string;
  campaignId?: string;
  /** A branded domain's name, null for the base domain (domainFilter). */
  domain?: string | null;
  /** ISO 3166-1 alpha-2, either case. */
  country?: string;
}

/** Link ids selected by linkId, tag, campaign or domain (their intersection), or undefined for all links. */
export async function linksMatching(pg: Pool, workspaceId: string, q: { linkId?: string; tag?: string; campaignId?: string; domain?: string | null }): Promise<string[] | undefined> {
  if (!q.linkId && !q.tag && !q.campaignId && q.domain === undefined) return undefined;
  const { rows } = await pg.query<{ id: string }>(
    `SELECT id FROM links WHERE workspace_id = $1
        AND ($2::uuid IS NULL OR id = $2) AND ($3::text IS NULL OR $3 = ANY (tags)) AND ($4::uuid IS NULL OR campaign_id = $4)
        AND (NOT $5::boolean OR domain IS NOT DISTINCT FROM $6::text)`,
    [workspaceId, q.linkId ?? null, q.tag?.trim().toLowerCase() ?? null, q.campaignId ?? null, q.domain !== undefined, q.domain ?? null],
  );
  return rows.map((r) => r.id);
}

export interface ScannedLink {
  id: string;
  destination: string;
  campaignId: string | null;
}

/** The workspace's links with these short IDs (analytics name links by short ID), by short ID. */
export async function linksByShortId(pg: Pool, workspaceId: string, shortIds: readonly string[]): Promise<Map<string, ScannedLink>> {
  if (shortIds.length === 0) return new Map();
  const { rows } = await pg.query<{ id: string; short_id: string; destination: string; campaign_id: string | null }>(
    'SELECT id, short_id, destination, campaign_id FROM links WHERE workspace_id = $1 AND short_id = ANY($2)',
    [workspaceId, shortIds],
  );
  return new Map(rows.map((r) => [r.short_id, { id: r.id, destination: r.destination, campaignId: r.campaign_id }]));
}

/** The workspace's links with these ids: their short IDs, by id. */
async function shortIdsById(pg: Pool, workspaceId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await pg.query<{ id: string; short_id: string }>('SELECT id, short_id FROM links WHERE workspace_id = $1 AND id = ANY($2::uuid[])', [workspaceId, ids]);
  return new Map(rows.map((r) => [r.id, r.short_id]));
}

/**
 * Names each top link by both short ID and id: the workspace's rollups rank short IDs, the link
 * rollups link ids (a link deleted since keeps its short ID with a null id, or is left out when only
 * its id is known).
 */
export async function withLinkIds(pg: Pool, workspaceId: string, result: AnalyticsResult) {
  const byShortId = await linksByShortId(pg, workspaceId, result.topLinks.flatMap((l) => (l.shortId === undefined ? [] : [l.shortId])));
  const byId = await shortIdsById(pg, workspaceId, result.topLinks.flatMap((l) => (l.linkId === undefined ? [] : [l.linkId])));
  const topLinks = result.topLinks.flatMap((l) => {
    if (l.shortId !== undefined) return [{ shortId: l.shortId, linkId: byShortId.get(l.shortId)?.id ?? null, scans: l.scans }];
    const shortId = byId.get(l.linkId);
    return shortId === undefined ? [] : [{ shortId, linkId: l.linkId, scans: l.scans }];
  });
  return { object: 'analytics' as const, ...result, topLinks };
}

/** The analytics of the workspace, or of the links a scope selects, over a range. */
export async function scanAnalytics(deps: { queries: AnalyticsQueries; pg: Pool }, workspaceId: string, range: TimeRange, scope: AnalyticsScope, includeBots: boolean, top: number) {
  const filter: AnalyticsFilter = { ...(scope.country ? { country: scope.country.toUpperCase() } : {}) };
  const linkIds = await linksMatching(deps.pg, workspaceId, scope);
  if (linkIds) filter.linkIds = linkIds;
  const result = await deps.queries.summary(workspaceId, range, filter, includeBots, top);
  return withLinkIds(deps.pg, workspaceId, result);
}
