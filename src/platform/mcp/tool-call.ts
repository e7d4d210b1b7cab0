// Answering a tools/call the same way for every tool: arguments checked
// (unknown ones refused, as REST refuses unknown fields), the result as
// `structuredContent` with a short text summary and the result as JSON text,
// and every failure, including bad arguments and an ApiError from a store, as
// a result with `isError: true` whose text is the REST error body, so the
// stable `code` is there to read.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../http/errors.ts';
import { describeError, errorBody } from '../http/server.ts';
import { summarize } from '../http/validation.ts';
import type { CatalogEntry } from './tool-catalog.ts';
import type { ToolContext } from './tool.ts';

export function errorResult(err: unknown, ctx: ToolContext): CallToolResult {
  const { status, code, message, details } = describeError(err as Error);
  if (status >= 500) ctx.log.error({ err, requestId: ctx.requestId }, 'MCP tool failed');
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(errorBody(ctx.requestId, code, message, details)) }] };
}

/** Checks the arguments, runs the tool and shapes its answer; never throws. */
export async function callTool({ tool, checkArguments }: CatalogEntry, args: unknown, ctx: ToolContext): Promise<CallToolResult> {
  const checked = checkArguments(args);
  if (!checked.ok) {
    const { code, details } = checked.failure;
    return errorResult(new ApiError(400, code, `Invalid arguments for ${tool.name}: ${summarize(details)}`, details), ctx);
  }
  try {
    const { summary, result } = await tool.run(checked.args as never, ctx);
    // The summary for a reader, then the same result as JSON text: protocol 2025-06-18 asks for the serialized
    // structured content too, for clients that pass only `content` on to the model.
    return { content: [{ type: 'text', text: summary }, { type: 'text', text: JSON.stringify(result) }], structuredContent: result as Record<string, unknown> };
  } catch (err) {
    return errorResult(err, ctx);
  }
}
