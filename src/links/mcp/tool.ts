// An MCP tool of this service: its name, a description written for a model,
// zod schemas of its arguments and of its structured result, and `run`. Calls
// are answered here the same way for every tool: arguments checked (unknown
// ones refused, as REST refuses unknown fields), the result as
// `structuredContent` with a short text summary and the result as JSON text, and every failure, including
// bad arguments and an ApiError from a store, as a result with `isError: true`
// whose text is the REST error body, so the stable `code` is there to read.
import type { FastifyBaseLogger } from 'fastify';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { ApiError, type ErrorDetailType } from '../../platform/http/errors.ts';
import { describeError, errorBody } from '../../platform/http/server.ts';
import { summarize, type ValidationFailure } from '../../platform/http/validation.ts';

/** Who is calling: the workspace of the API key, and the HTTP request (for error bodies and logs). */
export interface ToolContext {
  workspaceId: string;
  requestId: string;
  log: FastifyBaseLogger;
}

export interface ToolOutcome<Result> {
  /** A line or a few for a reader; the data itself is in `result`. */
  summary: string;
  result: Result;
}

export interface McpTool<Input extends z.ZodObject = z.ZodObject, Output extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  /** A strict object: arguments it does not name are refused. */
  input: Input;
  output: Output;
  annotations: ToolAnnotations;
  run(args: z.output<Input>, ctx: ToolContext): Promise<ToolOutcome<z.output<Output>>>;
}

/** Keeps a tool's argument and result types checked where it is written, and lets tools of any shape share a list. */
export const defineTool = <Input extends z.ZodObject, Output extends z.ZodObject>(tool: McpTool<Input, Output>): McpTool => tool as unknown as McpTool;

/** Annotations of a tool that only reads. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
/** Annotations of a tool that adds a record and changes nothing else. */
export const CREATES: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

/** Argument problems as the REST API reports body problems: a JSON pointer per field, and the code. */
export function argumentProblems(error: z.ZodError): ValidationFailure {
  const details: ErrorDetailType[] = [];
  let unknown = false;
  for (const issue of error.issues) {
    const path = issue.path.map((p) => `/${String(p)}`).join('');
    if (issue.code === 'unrecognized_keys') {
      unknown = true;
      for (const key of issue.keys) details.push({ path: `${path}/${key}`, message: 'is not an argument of this tool' });
    } else {
      details.push({ path, message: issue.message });
    }
  }
  return { code: unknown ? 'unknown_field' : 'validation_failed', details };
}

/** The object without its undefined members (a body schema refuses a member that is present but undefined). */
export const definedOnly = <T extends object>(value: T): T => Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;

/** Throws the REST error of a failed body check, with the paths it names. */
export function throwIfInvalid(failure: ValidationFailure | undefined): void {
  if (failure) throw new ApiError(400, failure.code, `Invalid arguments: ${summarize(failure.details)}`, failure.details);
}

export function errorResult(err: unknown, ctx: ToolContext): CallToolResult {
  const { status, code, message, details } = describeError(err as Error);
  if (status >= 500) ctx.log.error({ err, requestId: ctx.requestId }, 'MCP tool failed');
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(errorBody(ctx.requestId, code, message, details)) }] };
}

/** Checks the arguments, runs the tool and shapes its answer; never throws. */
export async function callTool(tool: McpTool, args: unknown, ctx: ToolContext): Promise<CallToolResult> {
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) {
    const failure = argumentProblems(parsed.error);
    return errorResult(new ApiError(400, failure.code, `Invalid arguments for ${tool.name}: ${summarize(failure.details)}`, failure.details), ctx);
  }
  try {
    const { summary, result } = await tool.run(parsed.data, ctx);
    // The summary for a reader, then the same result as JSON text: protocol 2025-06-18 asks for the serialized
    // structured content too, for clients that pass only `content` on to the model.
    return { content: [{ type: 'text', text: summary }, { type: 'text', text: JSON.stringify(result) }], structuredContent: result as Record<string, unknown> };
  } catch (err) {
    return errorResult(err, ctx);
  }
}
