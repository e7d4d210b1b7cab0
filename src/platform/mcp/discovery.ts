// A public discovery document for a product's MCP endpoint (e.g.
// GET /.well-known/mcp.json, no key): where the endpoint is, which protocol
// version and transport it speaks, how to authenticate, the limit, and the
// tools, from the same tool definitions the server lists.
import { Type, type Static } from '@sinclair/typebox';
import { addComponents, ref } from '../http/components.ts';
import { CLIENT_REFUSALS, documentOnly, RATE_LIMIT_HEADERS } from '../http/openapi.ts';
import type { App } from '../http/server.ts';
import { MCP_PROTOCOL_VERSION, type McpServerInfo } from './mcp-server.ts';
import type { McpTool } from './tool.ts';

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
    rateLimit: Type.Object({
      requestsPerMinute: Type.Integer(),
      scope: Type.String({ description: 'What one allowance is counted for.', examples: ['workspace'] }),
      description: Type.String(),
    }),
    tools: Type.Array(Type.Object({ name: Type.String(), title: Type.String(), description: Type.String() })),
  },
  { $id: 'McpDiscovery', title: 'McpDiscovery' },
);
export type McpDiscoveryType = Static<typeof McpDiscovery>;

export interface DiscoveryContent {
  server: McpServerInfo;
  /** What the tools do, for a person choosing a server. */
  description: string;
  /** Absolute URL of the endpoint. */
  endpoint: string;
  /** Bearer authentication: the header value's format and which keys it takes. */
  authentication: { format: string; description: string };
  rateLimit: McpDiscoveryType['rateLimit'];
  tools: readonly McpTool[];
}

export function discoveryDocument(content: DiscoveryContent): McpDiscoveryType {
  return {
    name: content.server.name,
    title: content.server.title,
    version: content.server.version,
    description: content.description,
    protocolVersion: MCP_PROTOCOL_VERSION,
    endpoint: content.endpoint,
    transport: { type: 'streamable-http', stateless: true, response: 'application/json', serverSentEvents: false },
    authentication: { type: 'bearer', header: 'Authorization', ...content.authentication },
    rateLimit: content.rateLimit,
    tools: content.tools.map((t) => ({ name: t.name, title: t.title, description: t.description })),
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
      description: 'The MCP endpoint, its protocol version, transport, authentication, limit and tools.',
      response: { 200: { ...ref(McpDiscovery), description: 'The discovery document.', headers: { 'cache-control': Type.String({ description: 'public, max-age=300' }), ...RATE_LIMIT_HEADERS } } },
    },
    config: documentOnly({ response: CLIENT_REFUSALS }),
  }, async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(document));
}
