// Answering a tools/call the same way for every tool: a tool the caller may not
// use refused first (as REST checks a key's access before the body), arguments
// checked (unknown ones refused, as REST refuses unknown fields), the result as
// `structuredContent` with a short text summary and the result as JSON text,
// and every failure, including bad arguments and an ApiError from a store, as
// a result with `isError: true` whose text is the product's REST error body, so
// the stable `code` is there to read.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../http/errors.ts';
import { describeError, errorBody, type ErrorRenderer } from '../http/server.ts';
import { summarize } from '../http/validation.ts';
import type { CatalogEntry } from './tool-catalog.ts';
import type { ToolContext } from './tool.ts';

const platformBody: ErrorRenderer = (requestId, code, message, details) => errorBody(requestId, code, message, details);

/**
 * A failure as a tool error. Its body always carries `error.details` (the documented shape of a tool
 * error): the fields at fault, or an empty list when the refusal names none (a 403, 404 or 409 of a
 * store), so a client reads one shape.
 */
export function errorResult(err: unknown, ctx: ToolContext, render: ErrorRenderer = platformBody): CallToolResult {
  const { status, code, message, details } = describeError(err as Error);
  if (status >= 500) ctx.log.error({ err, requestId: ctx.requestId }, 'MCP tool failed');
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(render(ctx.requestId, code, message, details ?? [], status)) }] };
}

export interface CallOptions<Ctx extends ToolContext> {
  /** Why the caller may not use the tool; undefined when it may. */
  refusal?: (entry: CatalogEntry<Ctx>, ctx: Ctx) => Error | undefined;
  errorBody?: ErrorRenderer;
}

/** Checks the caller and the arguments, runs the tool and shapes its answer; never throws. */
export async function callTool<Ctx extends ToolContext>(entry: CatalogEntry<Ctx>, args: unknown, ctx: Ctx, options: CallOptions<Ctx> = {}): Promise<CallToolResult> {
  const { tool, checkArguments } = entry;
  const refused = options.refusal?.(entry, ctx);
  if (refused) return errorResult(refused, ctx, options.errorBody);
  const checked = checkArguments(args);
  if (!checked.ok) {
    const { code, details } = checked.failure;
    return errorResult(new ApiError(400, code, `Invalid arguments for ${tool.name}: ${summarize(details)}`, details), ctx, options.errorBody);
  }
  try {
    const { summary, result } = await tool.run(checked.args as never, ctx);
    // The summary for a reader, then the same result as JSON text: protocol 2025-06-18 asks for the serialized
    // structured content too, for clients that pass only `content` on to the model.
    return { content: [{ type: 'text', text: summary }, { type: 'text', text: JSON.stringify(result) }], structuredContent: result as Record<string, unknown> };
  } catch (err) {
    return errorResult(err, ctx, options.errorBody);
  }
}
