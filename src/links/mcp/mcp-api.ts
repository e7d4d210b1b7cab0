// The MCP surface of the link service: the tools, built once over the stores
// and queries the REST API uses, served at POST /api/mcp with the /api/v1
// authentication, and described at /.well-known/mcp.json.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import type { App } from '../../platform/http/server.ts';
import { discoveryRoute } from '../../platform/mcp/discovery.ts';
import type { McpServerInfo } from '../../platform/mcp/mcp-server.ts';
import { parseOrigins } from '../../platform/mcp/allowed-origins.ts';
import { mcpRoute } from '../../platform/mcp/mcp-route.ts';
import type { McpTool } from '../../platform/mcp/tool.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { AnalyticsQueries } from '../analytics/analytics-queries.ts';
import type { CampaignStore } from '../campaigns/campaign-store.ts';
import type { Conversions } from '../conversions/conversions.ts';
import type { FunnelQueries } from '../conversions/funnel-query.ts';
import type { LinkWriteDeps } from '../short-links/link-operations.ts';
import { analyticsTools } from './analytics-tools.ts';
import { campaignTools } from './campaign-tools.ts';
import { conversionTools } from './conversion-tools.ts';
import { linkTools } from './link-tools.ts';

export const MCP_PATH = '/api/mcp';
export const DISCOVERY_PATH = '/.well-known/mcp.json';

export const SERVER_INFO: McpServerInfo = {
  name: 'linkmail-links',
  title: 'Short links, QR scans and conversions',
  version: '1.0.0',
  instructions:
    'Tools for one workspace of a short-link service: dynamic short links (printed as QR codes), campaigns (link folders), scan analytics and ' +
    'conversions. Ids come from list_links and list_campaigns. Analytics cover a trailing window of `daysBack` days in UTC. Errors come back as ' +
    'results with isError and a JSON body {"error":{"code","message","details"}}; `code` is stable.',
};

export interface McpApiDeps {
  /** The /api/v1 authentication and rate-limit hook, shared so REST and MCP count against one limit. */
  authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  links: LinkWriteDeps;
  campaigns: CampaignStore;
  pg: Pool;
  clickhouse: ClickHouse;
  conversions: Conversions;
  funnels: FunnelQueries;
  publicBaseUrl: string;
  apiPerMinute: number;
  /** MCP_ALLOWED_ORIGINS as configured (comma-separated). */
  allowedOrigins: string;
}

export function linkMcpTools(deps: Omit<McpApiDeps, 'authenticate' | 'publicBaseUrl' | 'apiPerMinute' | 'allowedOrigins'>): McpTool[] {
  const queries = new AnalyticsQueries(deps.clickhouse);
  return [
    ...linkTools(deps.links),
    ...campaignTools(deps.campaigns),
    ...analyticsTools({ queries, pg: deps.pg, links: deps.links.store, campaigns: deps.campaigns, funnels: deps.funnels }),
    ...conversionTools({ conversions: deps.conversions, funnels: deps.funnels }),
  ];
}

export async function registerMcp(app: App, deps: McpApiDeps): Promise<void> {
  const tools = linkMcpTools(deps);
  const tags = ['mcp'];
  await app.register(async (scope) => {
    // The request field `authenticate` sets, declared here as in the links API's own context.
    scope.decorateRequest('linksAuth', null as never);
    await mcpRoute(scope, {
      path: MCP_PATH,
      tags,
      operationIds: { post: 'postMcpMessage', get: 'openMcpEventStream', delete: 'endMcpSession' },
      security: [{ bearerAuth: [] }],
      about: `Authenticated and rate-limited like /api/v1 (the same keys and the same per-workspace limit). See ${DISCOVERY_PATH} for the tools.`,
      authenticate: deps.authenticate,
      tenantOf: (request) => request.linksAuth.workspaceId,
      // Pages of the service's own origin, and those configured.
      allowedOrigins: [new URL(deps.publicBaseUrl).origin, ...parseOrigins(deps.allowedOrigins).origins],
      server: SERVER_INFO,
      tools,
    });
  });
  await discoveryRoute(app, {
    path: DISCOVERY_PATH,
    tags,
    operationId: 'getMcpDiscovery',
    content: {
      server: SERVER_INFO,
      description: 'List and create short links and campaigns, read scan analytics and the conversion funnel, and record conversions, for one workspace.',
      endpoint: `${deps.publicBaseUrl.replace(/\/+$/, '')}${MCP_PATH}`,
      authentication: {
        format: 'Bearer <API key>',
        description: 'The workspace API keys of the REST API (lk_live_…); the workspace must be on the Enterprise plan.',
      },
      rateLimit: {
        requestsPerMinute: deps.apiPerMinute,
        scope: 'workspace',
        description: 'Shared with the REST API: every POST to the endpoint counts as one API request.',
      },
      tools,
    },
  });
}
