// The service's one MCP endpoint (POST /api/mcp) and its discovery document
// (GET /.well-known/mcp.json), serving every product that brings tools: the
// key decides which (mcp-product.ts).
import type { App } from '../http/server.ts';
import { parseOrigins } from './allowed-origins.ts';
import { discoveryRoute, type DiscoveryContent } from './discovery.ts';
import type { AnyMcpProduct } from './mcp-product.ts';
import { mcpRoute } from './mcp-route.ts';

export const MCP_PATH = '/api/mcp';
export const DISCOVERY_PATH = '/.well-known/mcp.json';

export interface McpEndpointDeps {
  /** The first answers requests that carry no product's key. */
  products: readonly AnyMcpProduct[];
  service: DiscoveryContent['service'];
  publicBaseUrl: string;
  /** MCP_ALLOWED_ORIGINS as configured (comma-separated). */
  allowedOrigins: string;
}

export async function registerMcpEndpoint(app: App, deps: McpEndpointDeps): Promise<void> {
  const tags = ['mcp'];
  await app.register(async (scope) => {
    await mcpRoute(scope, {
      path: MCP_PATH,
      tags,
      operationIds: { post: 'postMcpMessage', get: 'openMcpEventStream', delete: 'endMcpSession' },
      about: `The key decides the product (${deps.products.map((p) => p.name).join(', ')}): authenticated and rate-limited like that product's REST API (the same keys, the same limit, counted together). See ${DISCOVERY_PATH} for the tools.`,
      // Pages of the service's own origin, and those configured.
      allowedOrigins: [new URL(deps.publicBaseUrl).origin, ...parseOrigins(deps.allowedOrigins).origins],
      products: deps.products,
    });
  });
  await discoveryRoute(app, {
    path: DISCOVERY_PATH,
    tags,
    operationId: 'getMcpDiscovery',
    content: { service: deps.service, endpoint: `${deps.publicBaseUrl.replace(/\/+$/, '')}${MCP_PATH}`, products: deps.products },
  });
}
