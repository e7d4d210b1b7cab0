// GET /.well-known/mcp.json: public, no key. Tells an MCP client (or a person
// setting one up) where the endpoint is, which protocol version and transport
// it speaks, how to authenticate, the limit, and the tools, from the same tool
// definitions the server registers.
import { Type, type Static } from '@sinclair/typebox';
import { addComponents, ref } from '../../platform/http/components.ts';
import { CLIENT_REFUSALS, documentOnly } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import { MCP_PATH } from './mcp-route.ts';
import { MCP_PROTOCOL_VERSION, SERVER_INFO } from './mcp-server.ts';
import type { McpTool } from './tool.ts';

export const DISCOVERY_PATH = '/.well-known/mcp.json';

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
      scope: Type.Literal('workspace'),
      description: Type.String(),
    }),
    tools: Type.Array(Type.Object({ name: Type.String(), title: Type.String(), description: Type.String() })),
  },
  { $id: 'McpDiscovery', title: 'McpDiscovery' },
);
type McpDiscoveryType = Static<typeof McpDiscovery>;

export function discoveryDocument(tools: readonly McpTool[], publicBaseUrl: string, requestsPerMinute: number): McpDiscoveryType {
  return {
    name: SERVER_INFO.name,
    title: SERVER_INFO.title,
    version: SERVER_INFO.version,
    description: 'List and create short links and campaigns, read scan analytics and the conversion funnel, and record conversions, for one workspace.',
    protocolVersion: MCP_PROTOCOL_VERSION,
    endpoint: `${publicBaseUrl.replace(/\/+$/, '')}${MCP_PATH}`,
    transport: { type: 'streamable-http', stateless: true, response: 'application/json', serverSentEvents: false },
    authentication: {
      type: 'bearer',
      header: 'Authorization',
      format: 'Bearer <API key>',
      description: 'The workspace API keys of the REST API (lk_live_…); the workspace must be on the Enterprise plan.',
    },
    rateLimit: {
      requestsPerMinute,
      scope: 'workspace',
      description: 'Shared with the REST API: every POST to the endpoint counts as one API request.',
    },
    tools: tools.map((t) => ({ name: t.name, title: t.title, description: t.description })),
  };
}

export async function discoveryRoute(app: App, deps: { tools: readonly McpTool[]; publicBaseUrl: string; requestsPerMinute: number }): Promise<void> {
  const document = discoveryDocument(deps.tools, deps.publicBaseUrl, deps.requestsPerMinute);
  addComponents(app, [McpDiscovery]);
  app.get(DISCOVERY_PATH, {
    schema: {
      tags: ['mcp'],
      security: [],
      operationId: 'getMcpDiscovery',
      summary: 'MCP discovery document (public)',
      description: 'The MCP endpoint, its protocol version, transport, authentication, limit and tools.',
      response: { 200: { ...ref(McpDiscovery), description: 'The discovery document.', headers: { 'cache-control': Type.String({ description: 'public, max-age=300' }) } } },
    },
    config: documentOnly({ response: CLIENT_REFUSALS }),
  }, async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(document));
}
