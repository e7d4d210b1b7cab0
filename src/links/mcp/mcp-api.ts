// The MCP surface of the link service: the tools, built once over the stores
// and queries the REST API uses, the endpoint and the discovery document.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { AnalyticsQueries } from '../analytics/analytics-queries.ts';
import type { CampaignStore } from '../campaigns/campaign-store.ts';
import type { Conversions } from '../conversions/conversions.ts';
import type { FunnelQueries } from '../conversions/funnel-query.ts';
import type { LinkWriteDeps } from '../short-links/link-operations.ts';
import { analyticsTools } from './analytics-tools.ts';
import { campaignTools } from './campaign-tools.ts';
import { conversionTools } from './conversion-tools.ts';
import { discoveryRoute } from './discovery.ts';
import { linkTools } from './link-tools.ts';
import { mcpRoute } from './mcp-route.ts';
import type { McpTool } from './tool.ts';

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
}

export async function registerMcp(app: App, deps: McpApiDeps): Promise<void> {
  const queries = new AnalyticsQueries(deps.clickhouse);
  const tools: McpTool[] = [
    ...linkTools(deps.links),
    ...campaignTools(deps.campaigns),
    ...analyticsTools({ queries, pg: deps.pg, links: deps.links.store, campaigns: deps.campaigns, funnels: deps.funnels }),
    ...conversionTools({ conversions: deps.conversions, funnels: deps.funnels }),
  ];
  await mcpRoute(app, { authenticate: deps.authenticate, tools });
  await discoveryRoute(app, { tools, publicBaseUrl: deps.publicBaseUrl, requestsPerMinute: deps.apiPerMinute });
}
