// A product's part of the one MCP endpoint: which requests are its own (by the
// key's prefix), how it authenticates and limits them (its REST hook, so both
// edges share keys and limits), who the caller is, its server and tools, which
// tools a caller may use, its error body, and what the discovery document says
// of it. The key decides the product; a client never sees another product's tools.
import type { FastifyRequest } from 'fastify';
import type { TObject } from '@sinclair/typebox';
import type { RequestHook } from '../http/api-shell.ts';
import type { App, ErrorRenderer } from '../http/server.ts';
import type { McpServerInfo } from './mcp-server.ts';
import type { McpTool, ToolContext } from './tool.ts';

/** A product's request limit, as the discovery document states it. */
export interface McpRateLimit {
  requests: number;
  /** The window the requests are counted in. */
  windowSeconds: number;
  /** What one allowance is counted for, e.g. workspace or key. */
  scope: string;
  description: string;
}

export interface McpProduct<Ctx extends ToolContext = ToolContext> {
  /** Short name, for the discovery document (links, mail). */
  name: string;
  /** The OpenAPI security scheme of its keys. */
  securityScheme: string;
  /** Whether the request carries this product's kind of key (by its prefix), valid or not. */
  claims: (request: FastifyRequest) => boolean;
  /** The product's REST authentication and rate-limit hook; it refuses with the REST status and code. */
  authenticate: RequestHook;
  /** Declares the request field `authenticate` sets (decorateRequest) in the endpoint's scope. */
  decorate: (scope: App) => void;
  /** The caller `authenticate` admitted: the tools' context, without the request's id and log. */
  callerOf: (request: FastifyRequest) => Omit<Ctx, 'requestId' | 'log'>;
  server: McpServerInfo;
  tools: readonly McpTool<TObject, TObject, Ctx>[];
  /** Why this caller may not use the tool (it is left out of tools/list; a call gets this as a tool error); undefined when it may. */
  refusal?: (tool: McpTool<TObject, TObject, Ctx>, ctx: Ctx) => Error | undefined;
  /** The product's REST error body, which tool errors carry. */
  errorBody?: ErrorRenderer;
  discovery: {
    /** What its tools do, for a person choosing a server. */
    description: string;
    /** Which keys select this product, and what they must be. */
    keys: string;
    rateLimit: McpRateLimit;
    /** Which kinds of key may use the tool, when not every key of the product may. */
    keysOf?: (tool: McpTool<TObject, TObject, Ctx>) => string[] | undefined;
  };
}

/** A product of any context, as the endpoint holds them side by side. */
export type AnyMcpProduct = McpProduct<any>;
