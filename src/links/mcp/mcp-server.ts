// The MCP server of one HTTP request (the stateless pattern: a fresh server and
// transport per request, nothing kept between them), on the SDK's McpServer.
// Two answers differ from the SDK's defaults, to follow protocol 2025-06-18:
// - initialize always answers 2025-06-18, the one version this server speaks
//   (the SDK would echo any version it knows);
// - tools/call of an unknown tool is a JSON-RPC error (-32602), and bad
//   arguments are a tool result with isError and the stable error code (the SDK
//   answers both with an isError text of its own).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { callTool, type McpTool, type ToolContext } from './tool.ts';

export const MCP_PROTOCOL_VERSION = '2025-06-18';
export const SERVER_INFO = { name: 'linkmail-links', title: 'Short links, QR scans and conversions', version: '1.0.0' };

const INSTRUCTIONS =
  'Tools for one workspace of a short-link service: dynamic short links (printed as QR codes), campaigns (link folders), scan analytics and ' +
  'conversions. Ids come from list_links and list_campaigns. Analytics cover a trailing window of `daysBack` days in UTC. Errors come back as ' +
  'results with isError and a JSON body {"error":{"code","message","details"}}; `code` is stable.';

export function buildMcpServer(tools: readonly McpTool[], ctx: ToolContext): McpServer {
  const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS });
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, outputSchema: tool.output, annotations: tool.annotations },
      (args: unknown) => callTool(tool, args, ctx),
    );
  }

  server.server.setRequestHandler(InitializeRequestSchema, async () => ({
    protocolVersion: MCP_PROTOCOL_VERSION,
    // No list-changed notifications: a stateless server has no stream to send them on.
    capabilities: { tools: { listChanged: false } },
    serverInfo: SERVER_INFO,
    instructions: INSTRUCTIONS,
  }));

  const byName = new Map(tools.map((t) => [t.name, t]));
  server.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name} (tools/list names the tools of this server).`);
    return callTool(tool, request.params.arguments, ctx);
  });
  return server;
}
