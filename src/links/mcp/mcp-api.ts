// The link product's part of the MCP endpoint: the tools, built once over the
// stores and queries the REST API uses, answering link keys (lk_live_…) with
// the /api/v1 authentication and workspace limit (the endpoint itself is the
// platform's: src/platform/mcp/mcp-endpoint.ts).
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import type { RequestHook } from '../../platform/http/api-shell.ts';
import type { McpProduct } from '../../platform/mcp/mcp-product.ts';
import type { McpServerInfo } from '../../platform/mcp/mcp-server.ts';
import type { McpTool, ToolContext } from '../../platform/mcp/tool.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { AnalyticsQueries } from '../analytics/analytics-queries.ts';
import { hasLinksKey } from '../auth/api-auth.ts';
import { insufficientScope, TOOL_SCOPES, type Scope } from '../auth/scopes.ts';
import type { CampaignStore } from '../campaigns/campaign-store.ts';
import type { Conversions } from '../conversions/conversions.ts';
import type { FunnelQueries } from '../conversions/funnel-query.ts';
import type { LinkWriteDeps } from '../short-links/link-operations.ts';
import { analyticsTools } from './analytics-tools.ts';
import { campaignTools } from './campaign-tools.ts';
import { conversionTools } from './conversion-tools.ts';
import { linkTools } from './link-tools.ts';

export const SERVER_INFO: McpServerInfo = {
  name: 'linkmail-links',
  title: 'Short links, QR scans and conversions',
  version: '1.0.0',
  instructions:
    'Tools for one workspace of a short-link service: dynamic short links (printed as QR codes), campaigns (link folders), scan analytics and ' +
    'conversions. Ids come from list_links and list_campaigns. Analytics cover a trailing window of `daysBack` days in UTC. Errors come back as ' +
    'results with isError and a JSON body {"error":{"code","message","details"}}; `code` is stable.',
};

export interface LinksMcpDeps {
  /** The /api/v1 authentication and rate-limit hook, shared so REST and MCP count against one limit. */
  authenticate: RequestHook;
  links: LinkWriteDeps;
  campaigns: CampaignStore;
  pg: Pool;
  clickhouse: ClickHouse;
  conversions: Conversions;
  funnels: FunnelQueries;
  apiPerMinute: number;
}

export function linkMcpTools(deps: Omit<LinksMcpDeps, 'authenticate' | 'apiPerMinute'>): McpTool[] {
  const queries = new AnalyticsQueries(deps.clickhouse);
  return [
    ...linkTools(deps.links),
    ...campaignTools(deps.campaigns),
    ...analyticsTools({ queries, pg: deps.pg, links: deps.links.store, campaigns: deps.campaigns, funnels: deps.funnels }),
    ...conversionTools({ conversions: deps.conversions, funnels: deps.funnels }),
  ];
}

/** A link key's caller on the MCP endpoint: its workspace and scopes. */
export interface LinksToolContext extends ToolContext {
  scopes: ReadonlySet<Scope>;
}

export function linksMcpProduct(deps: LinksMcpDeps): McpProduct<LinksToolContext> {
  return {
    name: 'links',
    securityScheme: 'bearerAuth',
    claims: hasLinksKey,
    authenticate: deps.authenticate,
    // The request field `authenticate` sets, declared here as in the links API's own context.
    decorate: (scope) => scope.decorateRequest('linksAuth', null as never),
    callerOf: (request) => ({ tenantId: request.linksAuth.workspaceId, scopes: request.linksAuth.scopes }),
    // A tool needs the scope of the REST route it stands for (scopes.ts); a tool with none in the table is refused.
    refusal: (tool, ctx) => {
      const needed = TOOL_SCOPES[tool.name];
      if (!needed) return new Error(`link tool ${tool.name} has no scope`);
      return ctx.scopes.has(needed) ? undefined : insufficientScope(needed);
    },
    server: SERVER_INFO,
    tools: linkMcpTools(deps),
    discovery: {
      description: 'List and create short links and campaigns, read scan analytics and the conversion funnel, and record conversions, for one workspace.',
      keys: 'The workspace API keys of the REST API (lk_live_…); the workspace must be on the Enterprise plan.',
      rateLimit: {
        requests: deps.apiPerMinute,
        windowSeconds: 60,
        scope: 'workspace',
        description: 'Shared with the REST API: every POST to the endpoint counts as one API request of the workspace.',
      },
    },
  };
}
