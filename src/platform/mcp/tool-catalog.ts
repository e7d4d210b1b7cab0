// A product's tools prepared once: each with its argument check compiled and
// its listing (the tools/list entry) with the TypeBox schemas as plain JSON
// Schema (JSON round trip: TypeBox's symbol keys dropped), references to the
// REST API's named schemas written out in place, since an MCP client has no
// components to look them up in, and type lists written as anyOf branches
// (single-type-schema.ts), which more clients accept.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { inlineRefs } from '../http/components.ts';
import { singleTypeSchema } from './single-type-schema.ts';
import { compileArgumentCheck, type ArgumentCheck } from './tool-arguments.ts';
import type { McpTool } from './tool.ts';

export interface CatalogEntry {
  tool: McpTool;
  checkArguments: ArgumentCheck;
}

export interface ToolCatalog {
  /** The tools/list answer, in the order the product gave its tools. */
  listing: Tool[];
  get(name: string): CatalogEntry | undefined;
}

const plainJson = <T>(schema: unknown): T => singleTypeSchema(inlineRefs(JSON.parse(JSON.stringify(schema)))) as T;

export function toolCatalog(tools: readonly McpTool[]): ToolCatalog {
  const entries = new Map<string, CatalogEntry>();
  for (const tool of tools) {
    if (entries.has(tool.name)) throw new Error(`Two MCP tools named ${tool.name}`);
    if (tool.input.additionalProperties !== false) throw new Error(`MCP tool ${tool.name}: its input must refuse unknown arguments (additionalProperties: false)`);
    entries.set(tool.name, { tool, checkArguments: compileArgumentCheck(tool.input) });
  }
  const listing = tools.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: plainJson<Tool['inputSchema']>(t.input),
    outputSchema: plainJson<NonNullable<Tool['outputSchema']>>(t.output),
    annotations: t.annotations,
  }));
  return { listing, get: (name) => entries.get(name) };
}
