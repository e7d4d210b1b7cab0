// The MCP server of one HTTP request (the stateless pattern: a fresh server and
// transport per request, nothing kept between them), on the SDK's low-level
// Server with our own tools/list and tools/call (the SDK's McpServer wants zod
// schemas; ours are TypeBox, advertised as the JSON Schema they are).
// Two answers follow protocol 2025-06-18 where the SDK's defaults would not:
// - initialize always answers 2025-06-18, the one version this server speaks
//   (the SDK would echo any version it knows);
// - tools/call of an unknown tool is a JSON-RPC error (-32602), and bad
//   arguments, or a tool the caller may not use, are a tool result with
//   isError and the stable error code.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { callTool } from './tool-call.ts';
import type { ToolCatalog } from './tool-catalog.ts';
import type { ToolContext } from './tool.ts';

export const MCP_PROTOCOL_VERSION = '2025-06-18';

/** What a product's server says of itself at initialize. */
export interface McpServerInfo {
  name: string;
  title: string;
  version: string;
  /** For the model: what the tools are for and how errors read. */
  instructions: string;
}

export function buildMcpServer<Ctx extends ToolContext>(info: McpServerInfo, catalog: ToolCatalog<Ctx>, ctx: Ctx): Server {
  const serverInfo = { name: info.name, title: info.title, version: info.version };
  // No list-changed notifications: a stateless server has no stream to send them on.
  const capabilities = { tools: { listChanged: false } };
  const server = new Server(serverInfo, { capabilities, instructions: info.instructions });

  server.setRequestHandler(InitializeRequestSchema, async () => ({ protocolVersion: MCP_PROTOCOL_VERSION, capabilities, serverInfo, instructions: info.instructions }));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: catalog.listFor(ctx) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const entry = catalog.get(request.params.name);
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name} (tools/list names the tools of this server).`);
    return callTool(entry, request.params.arguments, ctx, catalog);
  });
  return server;
}
