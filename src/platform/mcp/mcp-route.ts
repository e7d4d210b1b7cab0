// The MCP endpoint, Streamable HTTP without sessions or event streams: one
// JSON-RPC message per POST, answered with one JSON body. Several products
// share it: the key's prefix decides which one answers (mcp-product.ts), with
// its own authentication, limit, server and tools.
//
// Layers, outside in:
// - HTTP: the authentication hook of the product whose key was sent (the first
//   product's for a request with no product's key), the one of its REST API, so
//   REST and MCP requests share keys, limit and X-RateLimit headers. Its
//   refusals, and an oversized (413) or non-JSON (415) body, keep the REST error body.
// - JSON-RPC, checked here before the SDK sees the message: -32700 for a body
//   that is not JSON, -32600 for JSON that is not one JSON-RPC message (batches
//   are gone from protocol 2025-06-18), -32602 for malformed params of the
//   methods we serve; 406 when the client will not take JSON, 400 for another
//   protocol version. Every JSON-RPC error body is {jsonrpc, id, error:{code, message}}.
// - MCP: a fresh server and SDK transport per request (mcp-server.ts), with the
//   product's tools for this caller; unknown methods get -32601 from the SDK.
// GET (the event-stream request) and DELETE (session end) are refused with 405
// and `Allow: POST`, before authentication: they do nothing for anyone.
// Before all of it, a browser Origin the service does not allow is refused with
// 403 and a JSON-RPC error body (DNS rebinding; allowed-origins.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import secureJson from 'secure-json-parse';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { addComponents, ref } from '../http/components.ts';
import { ErrorBody } from '../http/errors.ts';
import { errorResponses, OTHER_ANSWERS, documentOnly, RATE_LIMIT_HEADERS } from '../http/openapi.ts';
import type { App } from '../http/server.ts';
import { originAllowed } from './allowed-origins.ts';
import { buildMcpServer, MCP_PROTOCOL_VERSION } from './mcp-server.ts';
import type { AnyMcpProduct } from './mcp-product.ts';
import { toolCatalog, type ToolCatalog } from './tool-catalog.ts';

export interface McpRouteDeps {
  /** Where the endpoint is, e.g. /api/mcp. */
  path: string;
  /** OpenAPI tags of its routes, and the operationIds of POST (messages), GET and DELETE (both refused), unique in the service. */
  tags: string[];
  operationIds: { post: string; get: string; delete: string };
  /** For the OpenAPI description: how the endpoint is authenticated and limited, where its tools are described. */
  about: string;
  /** Browser origins served (serialised, e.g. https://app.example.com); a request without Origin is always served. */
  allowedOrigins: readonly string[];
  /** The products the endpoint serves; the first answers a request that carries no product's key (its 401). */
  products: readonly AnyMcpProduct[];
}

/** The JSON-RPC 2.0 error codes answered here (-32601, unknown method, comes from the SDK). */
const JSON_RPC = { parseError: -32700, invalidRequest: -32600, invalidParams: -32602, serverError: -32000 } as const;

const rpcError = (id: string | number | null, code: number, message: string) => ({ jsonrpc: '2.0' as const, id, error: { code, message } });

/** A request schema of the SDK (zod inside; only its safeParse is used here). */
interface RequestSchema {
  safeParse(value: unknown): { success: boolean; error?: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
}

/** The request schemas of the methods this server answers, to refuse malformed params with -32602. */
const PARAMS: Record<string, RequestSchema> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
};

/** Whether the client takes a JSON answer: no Accept header, or one naming application/json or a wildcard for it. */
function acceptsJson(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(',').some((part) => ['application/json', 'application/*', '*/*'].includes(part.split(';')[0]!.trim().toLowerCase()));
}

type Parsed = { message: JSONRPCMessage } | { status: number; body: ReturnType<typeof rpcError> };

/** The body as one JSON-RPC message, or the JSON-RPC error that answers it. */
function parseMessage(text: string | undefined): Parsed {
  let value: unknown;
  try {
    if (!text || text.trim() === '') throw new Error('empty body');
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    return { status: 400, body: rpcError(null, JSON_RPC.parseError, 'Parse error: the body is not valid JSON.') };
  }
  if (Array.isArray(value)) {
    return { status: 400, body: rpcError(null, JSON_RPC.invalidRequest, `Invalid Request: batches are not part of MCP ${MCP_PROTOCOL_VERSION}; send one message per request.`) };
  }
  const message = JSONRPCMessageSchema.safeParse(value);
  if (!message.success) {
    return { status: 400, body: rpcError(null, JSON_RPC.invalidRequest, 'Invalid Request: the body is not a JSON-RPC 2.0 request, notification or response ({"jsonrpc":"2.0","id":…,"method":…,"params":{…}}).') };
  }
  if (isJSONRPCRequest(message.data)) {
    const params = PARAMS[message.data.method]?.safeParse(message.data);
    if (params && !params.success) {
      const problems = (params.error?.issues ?? []).map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`).join('; ');
      return { status: 200, body: rpcError(message.data.id, JSON_RPC.invalidParams, `Invalid params for ${message.data.method}: ${problems}`) };
    }
  }
  return { message: message.data };
}

const JsonRpcMessage = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: 'Absent for notifications.' })),
    method: Type.String({ examples: ['tools/call'] }),
    params: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { $id: 'JsonRpcMessage', title: 'JsonRpcMessage', description: 'One JSON-RPC 2.0 message (no batches).' },
);

const JsonRpcResponse = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Union([Type.String(), Type.Integer(), Type.Null()]),
    result: Type.Optional(Type.Object({}, { additionalProperties: true })),
    error: Type.Optional(Type.Object({ code: Type.Integer(), message: Type.String(), data: Type.Optional(Type.Unknown()) })),
  },
  { $id: 'JsonRpcResponse', title: 'JsonRpcResponse' },
);

const jsonRpcAnswer = (description: string, headers: object = RATE_LIMIT_HEADERS) => ({ ...ref(JsonRpcResponse), description, headers }) as never;

export async function mcpRoute(app: App, deps: McpRouteDeps): Promise<void> {
  const { path, tags, products } = deps;
  if (products.length === 0) throw new Error('mcpRoute: no product');
  const catalogs = new Map<AnyMcpProduct, ToolCatalog<any>>(products.map((p) => [p, toolCatalog(p.tools, { refusal: p.refusal, errorBody: p.errorBody })]));
  /** The product whose key the request carries (by prefix), or the first for none. */
  const productOf = (request: FastifyRequest): AnyMcpProduct => products.find((p) => p.claims(request)) ?? products[0]!;
  const allowedOrigins = new Set(deps.allowedOrigins);
  const originRefusal = { ...ref(JsonRpcResponse), description: 'JSON-RPC error -32000: the request comes from a browser page whose Origin is not allowed.', headers: RATE_LIMIT_HEADERS };

  await app.register(async (scope) => {
    addComponents(scope, [JsonRpcMessage, JsonRpcResponse]);
    for (const product of products) product.decorate(scope);
    // The body is read as text and parsed here, so that bad JSON is a JSON-RPC
    // parse error rather than the REST invalid_json (only in this scope).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));

    // Runs before the routes' own onRequest hooks, so a refused page learns nothing about keys and uses no allowance.
    scope.addHook('onRequest', async (request, reply) => {
      const origin = request.headers.origin;
      if (originAllowed(origin, allowedOrigins)) return;
      return reply
        .status(403)
        .type('application/json')
        .send(JSON.stringify(rpcError(null, JSON_RPC.serverError, `Forbidden: Origin ${String(origin)} is not allowed to use this endpoint.`)));
    });

    scope.post(path, {
      onRequest: (request, reply) => productOf(request).authenticate(request, reply),
      // The body schema documents the message; parseMessage checks it, as JSON-RPC answers, not as a REST 400.
      validatorCompiler: () => () => true,
      schema: {
        tags,
        operationId: deps.operationIds.post,
        security: products.map((p) => ({ [p.securityScheme]: [] })),
        summary: `MCP endpoint (JSON-RPC, protocol ${MCP_PROTOCOL_VERSION})`,
        description:
          'Model Context Protocol over Streamable HTTP, stateless: one JSON-RPC message per POST, one JSON answer, no sessions and no event stream. ' +
          `Methods: initialize, ping, tools/list, tools/call. ${deps.about}`,
        body: ref(JsonRpcMessage),
        response: {
          200: jsonRpcAnswer('The JSON-RPC response (a result, or an error such as -32601 method not found or -32602 invalid params).'),
          202: { description: 'A notification or response was accepted; no body.', type: 'null', headers: RATE_LIMIT_HEADERS } as never,
          400: jsonRpcAnswer('JSON-RPC error: -32700 parse error, -32600 invalid request (also for batches), -32000 unsupported MCP-Protocol-Version.'),
          406: jsonRpcAnswer('JSON-RPC error -32000: the client does not accept application/json (this endpoint does not stream).'),
          ...errorResponses(401, 403, 413, 415, 429),
        },
      },
      // Documentation only: the route's 403 serializer stays the REST one, since the Origin refusal is sent as text.
      config: documentOnly({
        response: {
          403: { anyOf: [ref(ErrorBody), ref(JsonRpcResponse)], description: 'The key may not use the endpoint (the REST error body: a link key of a workspace not on the Enterprise plan, plan_upgrade_required), or the request comes from a browser page whose Origin is not allowed (JSON-RPC error -32000).', headers: RATE_LIMIT_HEADERS },
        },
      }),
    }, async (request, reply) => {
      const sendJson = (status: number, body: unknown) => reply.status(status as 200).type('application/json').send(JSON.stringify(body));
      if (!acceptsJson(request.headers.accept)) {
        return sendJson(406, rpcError(null, JSON_RPC.serverError, 'Not Acceptable: this endpoint answers with application/json only; it offers no event stream.'));
      }
      const version = request.headers['mcp-protocol-version'];
      if (version !== undefined && version !== MCP_PROTOCOL_VERSION) {
        return sendJson(400, rpcError(null, JSON_RPC.serverError, `Bad Request: unsupported MCP-Protocol-Version ${String(version)}; this server speaks ${MCP_PROTOCOL_VERSION}.`));
      }
      const parsed = parseMessage(request.body as unknown as string | undefined);
      if ('status' in parsed) return sendJson(parsed.status, parsed.body);

      const product = productOf(request);
      const server = buildMcpServer(product.server, catalogs.get(product)!, { ...product.callerOf(request), requestId: request.id, log: request.log });
      // The web-standard core of the SDK's StreamableHTTPServerTransport (which only adapts Node's req/res to it): it hands back a
      // Response, so the answer goes out through Fastify's reply with the headers the hooks set (X-RateLimit-*, x-request-id).
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      transport.onerror = (err) => request.log.debug({ err }, 'MCP transport refused a message');
      await server.connect(transport);
      try {
        // Headers as the transport requires them; what the client sent was checked above.
        const headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
        if (version) headers['mcp-protocol-version'] = version;
        const response = await transport.handleRequest(new Request(`http://localhost${path}`, { method: 'POST', headers }), { parsedBody: parsed.message });
        const text = await response.text();
        reply.status(response.status as 200);
        if (text === '') return reply.send();
        return reply.type(response.headers.get('content-type') ?? 'application/json').send(text);
      } finally {
        await server.close();
      }
    });

    // GET and DELETE are two routes, so that each has its own operationId.
    const refuse = async (request: FastifyRequest, reply: FastifyReply) =>
      reply
        .status(405)
        .header('allow', 'POST')
        .type('application/json')
        .send(JSON.stringify(rpcError(null, JSON_RPC.serverError, `Method Not Allowed: ${request.method} is not served; send JSON-RPC messages with POST (no event stream, no sessions).`)));
    const refusal = {
      tags,
      security: [],
      response: {
        403: originRefusal as never,
        405: jsonRpcAnswer('JSON-RPC error -32000: method not allowed; `Allow: POST`.', { ...RATE_LIMIT_HEADERS, allow: Type.String({ description: 'POST' }) }),
      },
    };
    // They never succeed: any other answer is the HTTP server's own.
    const config = documentOnly({ response: OTHER_ANSWERS });
    scope.get(path, {
      schema: { ...refusal, operationId: deps.operationIds.get, summary: 'Refused: no event stream (405)', description: 'GET would open a server-sent-event stream; this endpoint has none, so it answers 405 with `Allow: POST`.' },
      config,
    }, refuse);
    // A DELETE may carry a body, which meets the body rules of this scope first.
    const bodyRefusal = (description: string) => ({ ...ref(ErrorBody), description });
    scope.delete(path, {
      schema: {
        ...refusal, operationId: deps.operationIds.delete, summary: 'Refused: no sessions (405)', description: 'DELETE would end a session; this endpoint has none, so it answers 405 with `Allow: POST`.',
        response: { ...refusal.response, 413: bodyRefusal('Body too large (payload_too_large).'), 415: bodyRefusal('A body that is not JSON (unsupported_media_type).') },
      },
      config,
    }, refuse);
  });
}
