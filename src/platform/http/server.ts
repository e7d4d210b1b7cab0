// The Fastify server every HTTP process uses: request ids, strict validation,
// one error body shape, 404 for unknown routes, health and readiness.
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from '../logger.ts';
import { runChecks, type Check } from '../health.ts';
import { ApiError, type ErrorBodyType, type ErrorDetailType } from './errors.ts';
import type { ErrorObject } from 'ajv';
import { buildValidator, describeValidation, summarize } from './validation.ts';
import { buildLazySerializer } from './lazy-serializers.ts';
import { lazyRequestLogger } from './request-logger.ts';
import { FrontDoor } from './front-door.ts';
import { CLIENT_REFUSALS, documentOnly, PLATFORM_COMPONENTS, registerOpenApi, type OpenApiInfo } from './openapi.ts';
import { addComponents } from './components.ts';
import { Type } from '@sinclair/typebox';
import { ReservedPaths } from './reserved-paths.ts';
import { countHttpRequests } from '../metrics/http-metrics.ts';
import { httpRefusals } from '../metrics/series.ts';
import { isConstraintViolation, isDataException } from '../postgres/refused-value.ts';
import { addApiLimitHeaders, setAllowanceHeaders, type DefaultAllowance } from './api-limit-headers.ts';

export type App = FastifyInstance<any, any, any, any, TypeBoxTypeProvider>;

export interface RouteEntry {
  method: string;
  url: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered on the server (for the OpenAPI completeness check and discovery). */
    routeTable: RouteEntry[];
    /** The root path segments the server serves, which root-level identifiers (short IDs) may not take. */
    reservedPaths: ReservedPaths;
    /** Where a product answers its hottest requests before Fastify (front-door.ts). */
    frontDoor: FrontDoor;
    /** IPV6_LIMIT_PREFIX_LENGTH: the IPv6 network size per-IP limits count as one client (client-ip.ts). */
    ipv6LimitPrefixLength: number;
  }
}

export interface ServerOptions {
  log: Logger;
  checks: readonly Check[];
  /** Largest accepted request body. */
  bodyLimit?: number;
  /** Trusted proxy addresses (X-Forwarded-For honoured only from these). */
  trustProxy?: string[] | false;
  /** When given, the OpenAPI document is generated for every route (registered before any route). */
  openapi?: OpenApiInfo;
  /** The IPv6 network size per-IP limits count as one client (client-ip.ts); default 64. */
  ipv6LimitPrefixLength?: number;
  /** What an API response without limit headers of its own describes (the IP's failed-authentication allowance): see api-limit-headers.ts. */
  defaultAllowance?: DefaultAllowance;
  /** The body of a 404 no route took, from the platform's error body: a product may add to it (Resend's fields at the root). */
  notFoundBody?: (request: FastifyRequest, body: ErrorBodyType) => object;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A request's id: the client's X-Request-Id when it is well-formed (so a malformed one is replaced
 * rather than echoed), else `fresh`, a UUID no other request has (a new one when not given).
 */
export function requestIdOf(req: { headers: Record<string, string | string[] | undefined> }, fresh?: string): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : fresh ?? randomUUID();
}

/** Maps any error to a status, a stable code and a safe message. */
export function describeError(error: FastifyError | ApiError | Error): { status: number; code: string; message: string; details?: ErrorDetailType[] } {
  if (error instanceof ApiError) {
    return { status: error.statusCode, code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) };
  }
  const fe = error as FastifyError;
  if (fe.validation) {
    const { code, details } = describeValidation(fe.validation as unknown as ErrorObject[]);
    return { status: 400, code, message: `Invalid ${fe.validationContext ?? 'request'}: ${summarize(details)}`, details };
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, code: 'invalid_json', message: 'Request body is not valid JSON.' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, code: 'invalid_json', message: 'Request body is empty but Content-Type is application/json.' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, code: 'payload_too_large', message: 'Request body is too large.' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, code: 'unsupported_media_type', message: 'Unsupported Content-Type; send application/json.' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, code: 'invalid_content_length', message: 'Request body size did not match Content-Length.' };
  }
  // Safety net: a value Postgres refuses is the client's input, not our failure.
  if (isDataException(error)) return { status: 400, code: 'invalid_value', message: 'A value in the request is not acceptable.' };
  if ((error as { code?: unknown }).code === '23505') return { status: 409, code: 'conflict', message: 'The request conflicts with existing data.' };
  if (isConstraintViolation(error)) return { status: 400, code: 'invalid_value', message: 'A value in the request breaks a rule of the data.' };
  // Other client errors that Fastify raised with a 4xx status keep it, under a generic code.
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { status: fe.statusCode, code: 'bad_request', message: fe.message };
  }
  return { status: 500, code: 'internal_error', message: 'Internal error.' };
}

export function errorBody(requestId: string, code: string, message: string, details?: ErrorDetailType[]): ErrorBodyType {
  return { error: { code, message, requestId, ...(details ? { details } : {}) } };
}

/** Renders an error as a response body; a product may answer in a shape of its own (mail speaks Resend's). */
export type ErrorRenderer = (requestId: string, code: string, message: string, details: ErrorDetailType[] | undefined, status: number) => unknown;

/**
 * Requests whose body was empty under Content-Type: application/json. The parser lets them through
 * as "no body" (SDKs send the header on DELETE, and some routes take no body or an empty one), so a
 * route that needs a body refuses them in validation: answered `invalid_json`, as for malformed JSON.
 */
const emptyJsonBodies = new WeakSet<FastifyRequest>();

const isEmptyJsonBody = (error: Error, request: FastifyRequest): boolean =>
  (error as FastifyError).validationContext === 'body' && request.body === undefined && emptyJsonBodies.has(request);

/** The error handler of a server or of a product's context: logs by severity and answers with `render`'s body. */
export function errorHandler(render: ErrorRenderer) {
  return (error: FastifyError | ApiError | Error, request: FastifyRequest, reply: FastifyReply) => {
    const { status, code, message, details } = isEmptyJsonBody(error, request)
      ? describeError(Object.assign(new Error('empty body'), { code: 'FST_ERR_CTP_EMPTY_JSON_BODY' }))
      : describeError(error);
    // Error level (with the stack) is for bugs. Refusals we give on purpose are expected: a client's
    // mistake (4xx) at info, a 5xx we raised ourselves (an ApiError such as 503 render_busy) at warn.
    if (error instanceof ApiError && status >= 500) request.log.warn({ status, code }, message);
    else if (status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ status, code }, message);
    if (error instanceof ApiError && error.headers) reply.headers(error.headers);
    httpRefusals.inc({ status, code });
    return reply.status(status).send(render(request.id, code, message, details, status));
  };
}

export async function buildServer(options: ServerOptions): Promise<App> {
  const app = Fastify({
    loggerInstance: options.log,
    // Each request's child logger is made only when the request logs (request-logger.ts).
    childLoggerFactory: lazyRequestLogger as never,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    trustProxy: options.trustProxy && options.trustProxy.length > 0 ? options.trustProxy : false,
    // genReqId reads x-request-id itself, so a malformed one is replaced rather than echoed.
    requestIdHeader: false,
    genReqId: requestIdOf,
    // No per-request info lines: the redirect path is too hot for them; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Path parameters up to 10,000 characters: signed tokens of mail links carry their destination.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 10_000 },
    // Errors raised before routing (a malformed URL) get the same body as every other error.
    // They pass no route's hooks, so the limit headers are set here.
    frameworkErrors: (error, request, reply) => {
      const status = typeof error.statusCode === 'number' && error.statusCode < 500 ? error.statusCode : 400;
      const send = () => void (reply as FastifyReply).status(status).send(errorBody(String(request.id), error.code === 'FST_ERR_BAD_URL' ? 'bad_url' : 'bad_request', error.code === 'FST_ERR_BAD_URL' ? 'The request URL is malformed.' : error.message));
      if (!options.defaultAllowance) return send();
      void setAllowanceHeaders(request as FastifyRequest, reply as FastifyReply, options.defaultAllowance).then(send);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON only: a text/plain body is refused with 415 instead of reaching a handler as a string.
  app.removeContentTypeParser('text/plain');
  // An empty body with Content-Type: application/json (sent by many SDKs on DELETE) is "no body",
  // not malformed JSON; a route that needs a body answers invalid_json (errorHandler).
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    if (text.trim() === '') {
      emptyJsonBodies.add(request);
      return done(null, undefined);
    }
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch (err) {
      const invalid = new Error((err as Error).message.includes('prototype') ? 'Object contains forbidden prototype property' : 'Body is not valid JSON') as FastifyError;
      invalid.statusCode = 400;
      invalid.code = 'FST_ERR_CTP_INVALID_JSON_BODY';
      done(invalid, undefined);
    }
  });

  // Through the schema controller, so that plugins adding named schemas keep these validators.
  // (The declared type is @fastify/ajv-compiler's own; Fastify calls it as a FastifySchemaCompiler.)
  app.setSchemaController({ compilersFactory: { buildValidator: buildValidator as never, buildSerializer: buildLazySerializer as never } });
  addComponents(app, PLATFORM_COMPONENTS);

  if (options.openapi) await registerOpenApi(app, options.openapi);

  const routeTable: RouteEntry[] = [];
  const reservedPaths = new ReservedPaths();
  app.decorate('routeTable', routeTable);
  app.decorate('reservedPaths', reservedPaths);
  const frontDoor = new FrontDoor(options.trustProxy && options.trustProxy.length > 0 ? options.trustProxy : false);
  frontDoor.install(app.server);
  app.decorate('frontDoor', frontDoor);
  // Closing: Fastify answers everything from here on (503 to new requests). The server's close ends the
  // connections idle at that moment only; one whose answer was still being made went idle after and
  // held the close for its keep-alive timeout (Fastify's 72 s). So an answer sent while closing closes
  // its connection (the client sends its next request elsewhere, not on a connection about to be cut),
  // and connections idle otherwise (a stream's, whose headers went out before) are ended until the
  // server has closed.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    frontDoor.close();
    const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
    sweep.unref();
    app.server.once('close', () => clearInterval(sweep));
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  app.decorate('ipv6LimitPrefixLength', options.ipv6LimitPrefixLength ?? 64);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routeTable.push({ method, url: route.url });
    reservedPaths.addRoute(route.url);
  });

  if (options.defaultAllowance) addApiLimitHeaders(app, options.defaultAllowance);

  countHttpRequests(app);

  // A callback hook, not an async one: it runs on every request, redirects included.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  app.setErrorHandler(errorHandler(errorBody));

  app.setNotFoundHandler((request, reply) => {
    httpRefusals.inc({ status: 404, code: 'route_not_found' });
    const body = errorBody(request.id, 'route_not_found', `No route for ${request.method} ${request.url.split('?')[0]}.`);
    return reply.status(404).send(options.notFoundBody ? options.notFoundBody(request, body) : body);
  });

  const ops = { tags: ['ops'], security: [] };
  const clientRefusals = documentOnly({ response: CLIENT_REFUSALS });
  app.get('/healthz', {
    schema: { ...ops, operationId: 'getHealth', summary: 'Liveness: the process answers.', response: { 200: Type.Object({ status: Type.Literal('ok') }, { description: 'The process is alive.' }) } },
    config: clientRefusals,
  }, async () => ({ status: 'ok' as const }));

  const Checks = Type.Array(Type.Object({ name: Type.String(), ok: Type.Boolean(), latencyMs: Type.Integer(), error: Type.Optional(Type.String()) }));
  app.get('/readyz', {
    schema: {
      ...ops, operationId: 'getReadiness', summary: 'Readiness: Kafka, the schema registry, ClickHouse, Postgres and Redis answer (503 otherwise).',
      response: {
        200: Type.Object({ status: Type.Literal('ready'), checks: Checks }, { description: 'Every dependency answers.' }),
        503: Type.Object({ status: Type.Literal('not_ready'), checks: Checks }, { description: 'A dependency does not answer; its check holds the error.' }),
      },
    },
    config: clientRefusals,
  }, async (_request, reply) => {
    const checks = await runChecks(options.checks);
    const ready = checks.every((c) => c.ok);
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
  });

  return app;
}
