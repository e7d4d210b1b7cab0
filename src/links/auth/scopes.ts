// What a workspace key may do. Every /api/v1 route of the link product and every
// link tool on the MCP endpoint needs one scope (ROUTE_SCOPES, TOOL_SCOPES); a key
// without it is answered 403 insufficient_scope naming the scope. Keys made before
// scopes existed hold them all (migration 033).
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../platform/http/errors.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';

export const SCOPES = ['links:read', 'links:write', 'analytics:read', 'conversions:write', 'domains:write', 'webhooks:write', 'keys:write'] as const;
export type Scope = (typeof SCOPES)[number];

export const ScopeSchema = StringEnum(SCOPES, { description: 'What the key may do; see the scope table in docs/links-api.md.' });
export const Scopes = Type.Array(ScopeSchema, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true });

/** 403 naming the scope the key lacks; `why`, when the need is not the route's own (e.g. the key to revoke holds it). */
export const insufficientScope = (scope: Scope, why?: string): ApiError =>
  new ApiError(403, 'insufficient_scope', `This API key lacks the scope ${scope}${why ? ` (${why})` : ''}.`, [{ path: '', message: `needs ${scope}` }]);

/**
 * The scope each route of the link product needs, by method and path under /api/v1 (HEAD as GET).
 * A route missing here fails the ingress's start (scopeOfRoute), so none is left open by mistake.
 */
export const ROUTE_SCOPES: Readonly<Record<string, Scope>> = {
  'GET /links': 'links:read',
  'GET /links/:id': 'links:read',
  'POST /links': 'links:write',
  'PATCH /links/:id': 'links:write',
  'DELETE /links/:id': 'links:write',
  'POST /links/bulk': 'links:write',
  'POST /links/import': 'links:write',
  'GET /campaigns': 'links:read',
  'GET /campaigns/:id': 'links:read',
  'POST /campaigns': 'links:write',
  'PATCH /campaigns/:id': 'links:write',
  'POST /qr': 'links:read',
  'POST /barcode': 'links:read',
  'GET /link-domains': 'links:read',
  'GET /link-domains/:id': 'links:read',
  'POST /link-domains': 'domains:write',
  'PATCH /link-domains/:id': 'domains:write',
  'POST /link-domains/:id/verify': 'domains:write',
  'DELETE /link-domains/:id': 'domains:write',
  'GET /analytics': 'analytics:read',
  'GET /links/:id/analytics': 'analytics:read',
  'GET /analytics/export': 'analytics:read',
  'GET /analytics/funnel': 'analytics:read',
  'GET /analytics/orphan-visits': 'analytics:read',
  // Issue 54: a share publishes a link's analytics (a change of what the link exposes); a page token only reads them.
  'POST /links/:id/analytics/shares': 'links:write',
  'GET /links/:id/analytics/shares': 'analytics:read',
  'DELETE /links/:id/analytics/shares/:shareId': 'links:write',
  'POST /analytics/page-tokens': 'analytics:read',
  'GET /analytics/stream': 'analytics:read',
  'GET /links/:id/analytics/stream': 'analytics:read',
  'POST /track': 'conversions:write',
  'GET /webhooks': 'webhooks:write',
  'GET /webhooks/:id': 'webhooks:write',
  'POST /webhooks': 'webhooks:write',
  'PATCH /webhooks/:id': 'webhooks:write',
  'DELETE /webhooks/:id': 'webhooks:write',
  'POST /webhooks/:id/rotate-secret': 'webhooks:write',
  'GET /webhooks/:id/deliveries': 'webhooks:write',
  'GET /webhooks/:id/deliveries/:deliveryId': 'webhooks:write',
  'POST /webhooks/:id/deliveries/:deliveryId/redeliver': 'webhooks:write',
  'GET /keys': 'keys:write',
  'POST /keys': 'keys:write',
  'DELETE /keys/:id': 'keys:write',
  // Issue 43's erasure and workspace routes (built beside this): erasing data is a write of links' data.
  'POST /privacy/erasures': 'links:write',
  'GET /privacy/erasures/:id': 'links:read',
  'DELETE /links/:id/scans': 'links:write',
  'GET /workspace': 'links:read',
  'PATCH /workspace': 'links:write',
};

/** The scope a route needs; throws for a route with none, at registration. */
export function scopeOfRoute(method: string, path: string): Scope {
  const scope = ROUTE_SCOPES[`${method === 'HEAD' ? 'GET' : method} ${path}`];
  if (!scope) throw new Error(`link route ${method} ${path} has no scope in src/links/auth/scopes.ts`);
  return scope;
}

/** The scope each link tool of the MCP endpoint needs: the scope of the REST route it stands for. */
export const TOOL_SCOPES: Readonly<Record<string, Scope>> = {
  list_links: 'links:read',
  create_link: 'links:write',
  list_campaigns: 'links:read',
  create_campaign: 'links:write',
  get_analytics: 'analytics:read',
  get_report: 'analytics:read',
  get_referrers: 'analytics:read',
  get_funnel: 'analytics:read',
  track_conversion: 'conversions:write',
};
