// A product's tools prepared once: each with its argument check compiled and
// its listing (the tools/list entry) with the TypeBox schemas as plain JSON
// Schema (JSON round trip: TypeBox's symbol keys dropped), references to the
// REST API's named schemas written out in place, since an MCP client has no
// components to look them up in, and type lists written as anyOf branches
// (single-type-schema.ts), which more clients accept. A product may keep tools
// from some callers (a mail key's kind): those are left out of their listing.
import type { TObject } from '@sinclair/typebox';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { inlineRefs } from '../http/components.ts';
import { errorBody, type ErrorRenderer } from '../http/server.ts';
import { singleTypeSchema } from './single-type-schema.ts';
import { compileArgumentCheck, type ArgumentCheck } from './tool-arguments.ts';
import type { McpTool, ToolContext } from './tool.ts';

export interface CatalogEntry<Ctx extends ToolContext = ToolContext> {
  tool: McpTool<TObject, TObject, Ctx>;
  checkArguments: ArgumentCheck;
}

export interface CatalogOptions<Ctx extends ToolContext> {
  /** Why this caller may not use the tool (an ApiError with the REST code), or undefined when it may. */
  refusal?: (tool: McpTool<TObject, TObject, Ctx>, ctx: Ctx) => Error | undefined;
  /** The product's REST error body, which a tool error carries as its text; the platform's by default. */
  errorBody?: ErrorRenderer;
}

export interface ToolCatalog<Ctx extends ToolContext = ToolContext> {
  /** Every tool's tools/list entry, in the order the product gave its tools. */
  listing: Tool[];
  /** The tools/list answer for this caller: the tools it may use. */
  listFor(ctx: Ctx): Tool[];
  get(name: string): CatalogEntry<Ctx> | undefined;
  refusal(entry: CatalogEntry<Ctx>, ctx: Ctx): Error | undefined;
  errorBody: ErrorRenderer;
}

const plainJson = <T>(schema: unknown): T => singleTypeSchema(inlineRefs(JSON.parse(JSON.stringify(schema)))) as T;

const platformBody: ErrorRenderer = (requestId, code, message, details) => errorBody(requestId, code, message, details);

export function toolCatalog<Ctx extends ToolContext = ToolContext>(tools: readonly McpTool<TObject, TObject, Ctx>[], options: CatalogOptions<Ctx> = {}): ToolCatalog<Ctx> {
  const entries = new Map<string, CatalogEntry<Ctx>>();
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
  const refusal = (entry: CatalogEntry<Ctx>, ctx: Ctx) => options.refusal?.(entry.tool, ctx);
  return {
    listing,
    listFor: (ctx) => (options.refusal ? listing.filter((t) => !refusal(entries.get(t.name)!, ctx)) : listing),
    get: (name) => entries.get(name),
    refusal,
    errorBody: options.errorBody ?? platformBody,
  };
}
