// The HTTP surface the products share. The platform owns the `/api/v1` and
// `/admin/v1` prefixes, the one not-found answer under them and the public
// OpenAPI document; each product registers a child plugin of its own with its
// own authentication hook, its own request field and its own routes, so
// products never see each other's hooks.
//
//   /api/v1/…      product routes, each behind its product's authentication and limits
//   /api/v1/<unknown>  404 route_not_found, with the limit headers of the product whose key was sent
//   /api/v1/openapi    the OpenAPI document of the whole service (public)
//   /admin/v1/…    operator routes of every product, behind ADMIN_TOKEN; undeclared query parameters refused
// Every response here carries X-RateLimit-* (api-limit-headers.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { timingSafeEqual, createHash } from 'node:crypto';
import { bearerToken, type AttemptGuard } from './attempt-guard.ts';
import { ApiError } from './errors.ts';
import { serveOpenApiDocument } from './openapi.ts';
import { errorBody, type App } from './server.ts';

export const API_PREFIX = '/api/v1';
export const ADMIN_PREFIX = '/admin/v1';

export type RequestHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** A product's part of `/api/v1`. */
export interface ApiProduct {
  /** Product name, for logs and errors. */
  name: string;
  /** The OpenAPI security scheme (a key of the document's securitySchemes) its routes require unless they say otherwise. */
  securityScheme: string;
  /** Whether the request carries this product's kind of credential (by its key prefix), so an unknown path can answer with that product's limit headers. */
  claims: (request: FastifyRequest) => boolean;
  /** Authenticates and applies the product's limits: sets its request field and the limit headers, or throws an ApiError (401, 403, 429). */
  authenticate: RequestHook;
  /** Registers the product's request field (decorateRequest) and routes in its own context; the shell has already added `authenticate` there. */
  register: (api: App) => Promise<void>;
  /** Operator routes under /admin/v1, behind the admin token. */
  registerAdmin?: (admin: App) => Promise<void>;
}

export interface ApiShellOptions {
  products: readonly ApiProduct[];
  /** Operator token for /admin/v1; empty: those routes answer 404 as if they did not exist. */
  adminToken: string;
  /** The per-IP allowance of failed credentials, shared with the products' key checks. */
  guard: AttemptGuard;
}

const routeNotFound = (request: FastifyRequest) => errorBody(request.id, 'route_not_found', `No route for ${request.method} ${request.url.split('?')[0]}.`);

/** Registers `/api/v1` and `/admin/v1` with every product's routes. */
export async function registerApiShell(app: App, options: ApiShellOptions): Promise<void> {
  const { products } = options;

  await app.register(async (api) => {
    for (const product of products) {
      await api.register(async (scope) => {
        // Routes of this context require the product's key unless they declare their own security.
        scope.addHook('onRoute', (route) => {
          if (route.schema && route.schema.security === undefined) route.schema.security = [{ [product.securityScheme]: [] }];
        });
        scope.addHook('onRequest', product.authenticate);
        await product.register(scope);
      });
    }

    // The one not-found answer under /api/v1. A request with a product's key is authenticated
    // by that product first, before its body is read, as on the product's own routes: a bad key
    // gets the product's 401 or 429, a good one the 404 with the headers of the limit that applies.
    // A request with no product's key gets the 404 alone: it asked for nothing that exists.
    api.addHook('onRequest', async (request, reply) => {
      if (!request.is404) return;
      const owner = products.find((p) => p.claims(request));
      if (owner) await owner.authenticate(request, reply);
    });
    api.setNotFoundHandler(async (request, reply) => reply.status(404).send(routeNotFound(request)));

    serveOpenApiDocument(api, '/openapi');
  }, { prefix: API_PREFIX });

  await app.register(async (admin) => {
    // Operator routes take only the query parameters they declare: any other is 400 unknown_field,
    // as on the public lists (a route that declares none takes none).
    admin.addHook('onRoute', (route) => {
      if (route.schema && route.schema.querystring === undefined) route.schema.querystring = Type.Object({}, { additionalProperties: false });
    });
    admin.addHook('onRequest', adminTokenCheck(options.adminToken, options.guard));
    for (const product of products) if (product.registerAdmin) await admin.register(product.registerAdmin);
  }, { prefix: ADMIN_PREFIX });
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** The operator token check: 404 when no token is configured, else the token under the shared failed-attempt allowance. */
function adminTokenCheck(adminToken: string, guard: AttemptGuard): RequestHook {
  return async (request, reply) => {
    if (!adminToken) throw new ApiError(404, 'route_not_found', `No route for ${request.method} ${request.url.split('?')[0]}.`);
    await guard.check(
      request,
      reply,
      // Compare digests so the comparison takes the same time whatever the length.
      async () => (timingSafeEqual(digest(bearerToken(request) ?? ''), digest(adminToken)) ? true : undefined),
      () => new ApiError(401, 'invalid_admin_token', 'Send the operator token as "Authorization: Bearer <ADMIN_TOKEN>".'),
    );
  };
}
