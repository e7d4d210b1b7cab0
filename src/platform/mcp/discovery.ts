// The public discovery document of the MCP endpoint (GET /.well-known/mcp.json,
// no key): where the endpoint is, which protocol version and transport it
// speaks, how to authenticate, and for each product the key that selects it,
// its limit and its tools, from the same tool definitions the servers list.
import { Type, type Static } from '@sinclair/typebox';
import { addComponents, ref } from '../http/components.ts';
import { CLIENT_REFUSALS, documentOnly, RATE_LIMIT_HEADERS } from '../http/openapi.ts';
import type { App } from '../http/server.ts';
import type { AnyMcpProduct } from './mcp-product.ts';
import { MCP_PROTOCOL_VERSION } from './mcp-server.ts';

const McpDiscoveryTool = Type.Object({
  name: Type.String(),
  title: Type.String(),
  description: Type.String(),
  keys: Type.Optional(Type.Array(Type.String(), { description: 'The kinds of key that may use the tool, when not every key of the product may.' })),
});

const McpDiscoveryProduct = Type.Object({
  product: Type.String({ examples: ['links', 'mail'] }),
  name: Type.String({ description: 'serverInfo.name of the server that answers these keys.' }),
  title: Type.String(),
  version: Type.String(),
  description: Type.String(),
  keys: Type.String({ description: 'Which keys select this product and its tools.' }),
  rateLimit: Type.Object({
    requests: Type.Integer(),
    windowSeconds: Type.Integer(),
    scope: Type.String({ description: 'What one allowance is counted for.', examples: ['workspace', 'key'] }),
    description: Type.String(),
  }),
  tools: Type.Array(McpDiscoveryTool),
});

const McpDiscovery = Type.Object(
  {
    name: Type.String(),
    title: Type.String(),
    version: Type.String(),
    description: Type.String(),
    protocolVersion: Type.String(),
    endpoint: Type.String({ description: 'URL of the MCP endpoint (POST).' }),
    transport: Type.Object({
      type: Type.Literal('streamable-http'),
      stateless: Type.Boolean({ description: 'No Mcp-Session-Id; every request stands alone.' }),
      response: Type.Literal('application/json'),
      serverSentEvents: Type.Boolean(),
    }),
    authentication: Type.Object({
      type: Type.Literal('bearer'),
      header: Type.Literal('Authorization'),
      format: Type.String(),
      description: Type.String(),
    }),
    products: Type.Array(McpDiscoveryProduct, { description: 'One per kind of key: the key decides which product\'s server answers and which tools it lists.' }),
  },
  { $id: 'McpDiscovery', title: 'McpDiscovery' },
);
export type McpDiscoveryType = Static<typeof McpDiscovery>;

export interface DiscoveryContent {
  /** The service as a whole. */
  service: { name: string; title: string; version: string; description: string };
  /** Absolute URL of the endpoint. */
  endpoint: string;
  products: readonly AnyMcpProduct[];
}

export function discoveryDocument(content: DiscoveryContent): McpDiscoveryType {
  return {
    ...content.service,
    protocolVersion: MCP_PROTOCOL_VERSION,
    endpoint: content.endpoint,
    transport: { type: 'streamable-http', stateless: true, response: 'application/json', serverSentEvents: false },
    authentication: {
      type: 'bearer',
      header: 'Authorization',
      format: 'Bearer <API key>',
      description: 'An API key of one product, as its REST API takes it; the key decides which product\'s tools the endpoint serves.',
    },
    products: content.products.map((p) => ({
      product: p.name,
      name: p.server.name,
      title: p.server.title,
      version: p.server.version,
      description: p.discovery.description,
      keys: p.discovery.keys,
      rateLimit: p.discovery.rateLimit,
      tools: p.tools.map((t) => {
        const keys = p.discovery.keysOf?.(t);
        return { name: t.name, title: t.title, description: t.description, ...(keys ? { keys } : {}) };
      }),
    })),
  };
}

export async function discoveryRoute(app: App, deps: { path: string; tags: string[]; operationId: string; content: DiscoveryContent }): Promise<void> {
  const document = discoveryDocument(deps.content);
  addComponents(app, [McpDiscovery]);
  app.get(deps.path, {
    schema: {
      tags: deps.tags,
      security: [],
      operationId: deps.operationId,
      summary: 'MCP discovery document (public)',
      description: 'The MCP endpoint, its protocol version, transport and authentication, and per product the key that selects it, its limit and its tools.',
      response: { 200: { ...ref(McpDiscovery), description: 'The discovery document.', headers: { 'cache-control': Type.String({ description: 'public, max-age=300' }), ...RATE_LIMIT_HEADERS } } },
    },
    config: documentOnly({ response: CLIENT_REFUSALS }),
  }, async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(document));
}
