// REST routes of scan analytics: the workspace summary, one link's analytics,
// and the raw export.
import { Type } from '@sinclair/typebox';
import { notFound } from '../../platform/http/errors.ts';
import { addComponents } from '../../platform/http/components.ts';
import { API_ERRORS, errorResponses, RATE_LIMIT_HEADERS, withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { CampaignStore } from '../campaigns/campaign-store.ts';
import type { LinkStore } from '../short-links/link-store.ts';
import { AnalyticsQueries } from './analytics-queries.ts';
import { Analytics, ANALYTICS_COMPONENTS, EXPORT_COLUMNS, ExportQuery, LinkAnalyticsQuery, WorkspaceAnalyticsQuery } from './analytics-schemas.ts';
import { linksMatching, scanAnalytics, withLinkIds } from './scan-analytics.ts';
import { domainFilter } from '../short-links/link-domain.ts';
import { exportScans } from './scan-export.ts';
import { rawRange, resolveRange } from './time-range.ts';


export async function analyticsRoutes(app: App, deps: { clickhouse: ClickHouse; pg: Pool; links: LinkStore; campaigns: CampaignStore }): Promise<void> {
  const queries = new AnalyticsQueries(deps.clickhouse);
  const tags = ['analytics'];
  addComponents(app, ANALYTICS_COMPONENTS);

  app.get('/analytics', {
    schema: {
      tags, operationId: 'getWorkspaceAnalytics', summary: 'Workspace scan analytics',
      description: 'Totals, time series, top links, countries, cities, devices, OS, browsers, referrers and UTM values over a range (whole UTC hours). Filters: linkId, tag, campaignId (links that carry them now), domain (links on it), country. A linkId or campaignId the workspace does not have (another workspace\'s too) is 404 not_found, as in the funnel.',
      querystring: WorkspaceAnalyticsQuery,
      response: { 200: withRateLimitHeaders(Analytics, 'Scan analytics.'), ...errorResponses(...API_ERRORS, 404) },
    },
  }, async (request) => {
    const q = request.query;
    // An unknown id is refused, not answered with zero scans (which would read as "no traffic").
    if (q.linkId && !(await deps.links.get(request.linksAuth.workspaceId, q.linkId))) throw notFound('link');
    if (q.campaignId && !(await deps.campaigns.get(request.linksAuth.workspaceId, q.campaignId))) throw notFound('campaign');
    const scope = { ...q, domain: domainFilter(q.domain, deps.links.baseHost) };
    return scanAnalytics({ queries, pg: deps.pg }, request.linksAuth.workspaceId, resolveRange(q), scope, q.includeBots ?? false, q.top ?? 10);
  });

  app.get('/links/:id/analytics', {
    schema: {
      tags, operationId: 'getLinkAnalytics', summary: 'Scan analytics of one link',
      description: 'The same groups as the workspace analytics, for one link and a range.',
      params: Type.Object({ id: Type.String({ description: 'Link UUID, in any case.' }) }),
      querystring: LinkAnalyticsQuery,
      response: { 200: withRateLimitHeaders(Analytics, 'Scan analytics of the link.'), ...errorResponses(...API_ERRORS, 404) },
    },
  }, async (request) => {
    const { id } = request.params;
    if (!(await deps.links.get(request.linksAuth.workspaceId, id))) throw notFound('link');
    const q = request.query;
    const range = resolveRange(q);
    const result = await queries.summary(request.linksAuth.workspaceId, range, { linkIds: [id], ...(q.country ? { country: q.country.toUpperCase() } : {}) }, q.includeBots ?? false, q.top ?? 10);
    return withLinkIds(deps.pg, request.linksAuth.workspaceId, result);
  });

  app.get('/analytics/export', {
    schema: {
      tags, operationId: 'exportScans', summary: 'Export raw scan events (CSV or JSON)',
      description: 'Oldest first, at most 50,000 rows, streamed. CSV has a header row, every field quoted, and a text field starting with =, +, -, @, a tab or a carriage return (a spreadsheet formula) gets a leading \' (OWASP CSV injection); JSON is an array of objects with the values exactly. Columns: scanId, timestamp, linkId, shortId, campaignId, destination, country, region, city, device, os, browser, referrer, referrerHost, utmSource, utmMedium, utmCampaign, utmTerm, utmContent, isBot, visitorId, clickId, userAgent, variant (the A/B test variant\'s URL, empty for none).',
      querystring: ExportQuery,
      response: {
        // A stream: Fastify sends it as it is, whatever the schema.
        200: {
          description: 'The scans, oldest first, as an attachment.',
          headers: { ...RATE_LIMIT_HEADERS, 'content-disposition': Type.String({ description: 'attachment; filename="scans.csv" (or scans.json)' }) },
          content: {
            'text/csv': { schema: Type.String({ description: `format=csv: a header row, then one row per scan. Columns: ${EXPORT_COLUMNS.join(', ')}.` }) },
            'application/json': { schema: Type.Array(Type.Object({}, { additionalProperties: true, description: `One object per scan with the keys ${EXPORT_COLUMNS.join(', ')}.` })) },
          },
        } as never,
        ...errorResponses(...API_ERRORS, 404),
      },
    },
  }, async (request, reply) => {
    const q = request.query;
    const { from, to } = rawRange(q);
    if (q.linkId) {
      if (!(await deps.links.get(request.linksAuth.workspaceId, q.linkId))) throw notFound('link');
    }
    const format = q.format ?? 'csv';
    const abort = new AbortController();
    // A client that goes away cancels the query.
    request.raw.once('close', () => abort.abort());
    reply.raw.once('close', () => abort.abort());
    // A domain is the links on it now, as tags and campaigns are in the analytics.
    const linkIds = q.domain === undefined ? undefined : await linksMatching(deps.pg, request.linksAuth.workspaceId, { domain: domainFilter(q.domain, deps.links.baseHost) });
    const stream = await exportScans(deps.clickhouse, {
      workspaceId: request.linksAuth.workspaceId, from: new Date(from), to: new Date(to), ...(q.linkId ? { linkId: q.linkId } : {}), ...(linkIds ? { linkIds } : {}),
      includeBots: q.includeBots ?? false, limit: q.limit ?? 50_000, format,
    }, abort.signal);
    return reply
      .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8')
      .header('content-disposition', `attachment; filename="scans.${format}"`)
      .send(stream);
  });
}
