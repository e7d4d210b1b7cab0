// GET /api/v1/analytics/orphan-visits: the workspace's orphan visits (its
// branded domains' root and unknown short IDs, sent on by their fallbacks),
// newest first, from ClickHouse, a page at a time (keyset cursor).
import { Type, type Static } from '@sinclair/typebox';
import { ApiError } from '../../platform/http/errors.ts';
import { addComponents, ref } from '../../platform/http/components.ts';
import { API_ERRORS, errorResponses, withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { sql } from '../../platform/clickhouse/literal.ts';
import { IncludeBots } from '../analytics/analytics-schemas.ts';
import { rawRange } from '../analytics/time-range.ts';
import { DomainName } from '../domains/domain-schemas.ts';
import { ORPHAN_VISIT_TYPES } from './orphan-visit.ts';

export const OrphanVisit = Type.Object(
  {
    domain: Type.String({ description: 'The branded domain visited.' }),
    path: Type.String({ description: 'What was asked for, without the query string: / for base_url, /<short ID> for invalid_short_url.' }),
    type: StringEnum(ORPHAN_VISIT_TYPES, { description: 'base_url: the domain\'s root, sent to its rootUrl; invalid_short_url: a short ID no link has on it, sent to its notFoundUrl.' }),
    timestamp: Type.String({ format: 'date-time' }),
    country: Type.Union([Type.String(), Type.Null()], { description: 'ISO 3166-1 alpha-2, from the IP; null when unknown.' }),
    device: Type.String(),
    referrerHost: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'OrphanVisit', title: 'OrphanVisit' },
);

export const OrphanVisitList = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(ref(OrphanVisit)),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  { $id: 'OrphanVisitList', title: 'OrphanVisitList', description: 'Newest first.' },
);

const OrphanVisitsQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Start (inclusive). Default: 30 days before `to`.' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'End (exclusive). Default: now.' })),
    domain: Type.Optional({ ...DomainName, description: 'Only this branded domain\'s visits (its name).' }),
    includeBots: Type.Optional(IncludeBots),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page (with the same filters).' })),
  },
  { additionalProperties: false },
);

interface Row { visit_id: string; domain: string; path: string; type: string; ts: string; country: string; device: string; referrer_host: string }

/** The last row of a page: (its second, its id). */
const encodeCursor = (ts: number, id: string) => Buffer.from(JSON.stringify({ ts, id })).toString('base64url');

function decodeCursor(text: string): { ts: number; id: string } {
  try {
    const c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { ts?: unknown; id?: unknown };
    if (Number.isSafeInteger(c.ts) && typeof c.id === 'string' && /^[0-9a-f-]{36}$/.test(c.id)) return c as { ts: number; id: string };
  } catch {
    // refused below
  }
  throw new ApiError(400, 'invalid_cursor', 'cursor is not a nextCursor of this list; pass it back unchanged.', [{ path: '/cursor', message: 'invalid' }]);
}

export async function orphanVisitRoutes(app: App, deps: { clickhouse: ClickHouse }): Promise<void> {
  addComponents(app, [OrphanVisit, OrphanVisitList]);
  app.get('/analytics/orphan-visits', {
    schema: {
      tags: ['analytics'], operationId: 'listOrphanVisits', summary: 'Orphan visits of the workspace\'s branded domains',
      description: 'Visits to a branded domain\'s root sent to its `rootUrl` (base_url) and to a short ID it has no link for sent to its `notFoundUrl` (invalid_short_url), newest first, a page at a time. Visits of a domain without these settings are 404s and not recorded. Bots are left out unless includeBots=true. A visit is listed a few seconds after it happened.',
      querystring: OrphanVisitsQuery,
      response: { 200: withRateLimitHeaders(OrphanVisitList, 'A page of orphan visits.'), ...errorResponses(...API_ERRORS) },
    },
  }, async (request) => {
    const q = request.query as Static<typeof OrphanVisitsQuery>;
    const { from, to } = rawRange(q);
    const limit = q.limit ?? 100;
    const after = q.cursor ? decodeCursor(q.cursor) : undefined;
    const rows = await deps.clickhouse.rows<Row>(sql`
      SELECT visit_id, domain, path, type, toUnixTimestamp(ts) AS ts, country, device, referrer_host FROM orphan_visits
       WHERE workspace_id = ${request.linksAuth.workspaceId} AND ts >= ${new Date(from)} AND ts < ${new Date(to)}
             ${q.domain ? sql`AND domain = ${q.domain.toLowerCase().replace(/\.$/, '')}` : sql``}
             ${q.includeBots ? sql`` : sql`AND is_bot = 0`}
             ${after ? sql`AND (ts < ${new Date(after.ts * 1000)} OR (ts = ${new Date(after.ts * 1000)} AND visit_id < ${after.id}))` : sql``}
       ORDER BY ts DESC, visit_id DESC LIMIT ${limit + 1}`);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      object: 'list' as const,
      data: page.map((r) => ({
        domain: r.domain, path: r.path, type: r.type as (typeof ORPHAN_VISIT_TYPES)[number], timestamp: new Date(Number(r.ts) * 1000).toISOString(),
        country: r.country || null, device: r.device, referrerHost: r.referrer_host || null,
      })),
      nextCursor: rows.length > limit && last ? encodeCursor(Number(last.ts), last.visit_id) : null,
    };
  });
}
