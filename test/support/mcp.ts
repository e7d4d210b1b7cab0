// The official MCP SDK client against a real ingress's endpoint (Streamable
// HTTP, with the Authorization header and a client IP of its own), and calls of
// tools that must succeed or must fail.
import { expect } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freshIp } from './ingress.ts';

export interface Mcp {
  client: Client;
  transport: StreamableHTTPClientTransport;
  close: () => Promise<void>;
}

/** An SDK client connected to /api/mcp with this key. */
export async function connectMcp(baseUrl: string, key: string, ip = freshIp()): Promise<Mcp> {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': ip } } });
  const client = new Client({ name: 'linkmail-integration-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

/** The names of the tools the key lists. */
export async function toolNames(mcp: Mcp): Promise<string[]> {
  return (await mcp.client.listTools()).tools.map((t) => t.name);
}

/** Calls a tool that must succeed; its structured result (also in `content` as JSON text, after the summary). */
export async function callOk(mcp: Mcp, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const res = await mcp.client.callTool({ name, arguments: args });
  expect(res.isError, `${name}: ${JSON.stringify(res.content)}`).toBeFalsy();
  const content = res.content as { type: string; text: string }[];
  expect(content[0]!.text.length).toBeGreaterThan(0);
  expect(JSON.parse(content[1]!.text)).toEqual(res.structuredContent);
  return res.structuredContent;
}

/** Calls a tool that must fail; the error body its text carries (the product's REST error body). */
export async function callRefused(mcp: Mcp, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const res = await mcp.client.callTool({ name, arguments: args });
  expect(res.isError, `${name} should fail: ${JSON.stringify(res.structuredContent)}`).toBe(true);
  expect(res.structuredContent).toBeUndefined();
  return JSON.parse((res.content as { text: string }[])[0]!.text);
}
