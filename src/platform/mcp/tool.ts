// An MCP tool of a product: its name, a description written for a model,
// TypeBox schemas of its arguments and of its structured result (JSON Schema,
// advertised as they are), and `run`. Products build their argument and result
// schemas from the TypeBox schemas of their REST API, so both edges share rules.
import type { StaticDecode, TObject, TSchema } from '@sinclair/typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';

/** Who is calling: the tenant the product authenticated, and the HTTP request (for error bodies and logs). A product may add what its tools need (mail: the key's grant). */
export interface ToolContext {
  tenantId: string;
  requestId: string;
  log: FastifyBaseLogger;
}

export interface ToolOutcome<Result> {
  /** A line or a few for a reader; the data itself is in `result`. */
  summary: string;
  result: Result;
}

/** A REST schema with a description written for a model; its rules unchanged. */
export const describedFor = <T extends TSchema>(schema: T, description: string): T => ({ ...schema, description });

/** A member schema whose `default` the argument check fills in (Ajv's useDefaults), so the tool always gets a value. */
export function withDefault<T extends TSchema>(schema: T): T & { default: StaticDecode<T> } {
  if (schema.default === undefined) throw new Error('withDefault: the schema has no default');
  return schema as T & { default: StaticDecode<T> };
}

type DefaultedKeys<T extends TObject> = {
  [K in keyof T['properties']]: T['properties'][K] extends { default: unknown } ? K : never;
}[keyof T['properties']];

/** The arguments a tool runs with: checked, transforms decoded, and the members marked withDefault present. */
export type ToolArgs<T extends TObject> = StaticDecode<T> & Required<Pick<StaticDecode<T>, DefaultedKeys<T> & keyof StaticDecode<T>>>;

export interface McpTool<Input extends TObject = TObject, Output extends TObject = TObject, Ctx extends ToolContext = ToolContext> {
  name: string;
  title: string;
  description: string;
  /** An object with `additionalProperties: false`: arguments it does not name are refused. */
  input: Input;
  output: Output;
  annotations: ToolAnnotations;
  run(args: ToolArgs<Input>, ctx: Ctx): Promise<ToolOutcome<StaticDecode<Output>>>;
}

/** Keeps a tool's argument and result types checked where it is written, and lets tools of any shape share a list. */
export const defineTool = <Input extends TObject, Output extends TObject, Ctx extends ToolContext = ToolContext>(tool: McpTool<Input, Output, Ctx>): McpTool<TObject, TObject, Ctx> =>
  tool as unknown as McpTool<TObject, TObject, Ctx>;

/** Annotations of a tool that only reads. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
/** Annotations of a tool that adds a record and changes nothing else. */
export const CREATES: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
