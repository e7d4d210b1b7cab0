// The API of analytics pages: a link's shares (made, listed, revoked) and page
// tokens (a workspace key's analytics page opened by URL). The pages themselves
// are root routes (page-routes.ts).
import { Type } from '@sinclair/typebox';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { addComponents, ref } from '../../platform/http/components.ts';
import { API_BODY_ERRORS, API_ERRORS, errorResponses, withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import { hashPassword } from '../short-links/link-password.ts';
import { LATEST_TIME } from '../analytics/time-range.ts';
import type { PageSessions } from './page-sessions.ts';
import { AnalyticsShare, AnalyticsShareList, CreateAnalyticsShareBody, CreatePageTokenBody, PageToken, SHARE_COMPONENTS } from './share-schemas.ts';
import { LIVE_SHARES_PER_LINK, type ShareRow, type ShareStore } from './share-store.ts';

export interface ShareRoutesDeps {
  shares: ShareStore;
  sessions: PageSessions;
  /** The service's own origin (PUBLIC_BASE_URL), where the pages are served. */
  publicBaseUrl: string;
}

const LinkParams = Type.Object({ id: Type.String({ description: 'Link UUID, in any case.' }) });
const ShareParams = Type.Object({ id: Type.String({ description: 'Link UUID, in any case.' }), shareId: Type.String({ maxLength: 100, description: 'The share id (sh_…).' }) });

export function shareStatus(row: ShareRow, now = Date.now()): 'active' | 'expired' | 'revoked' {
  if (row.revoked_at) return 'revoked';
  return row.expires_at && row.expires_at.getTime() <= now ? 'expired' : 'active';
}

export async function shareRoutes(app: App, deps: ShareRoutesDeps): Promise<void> {
  const tags = ['analytics'];
  addComponents(app, SHARE_COMPONENTS);
  const toShare = (row: ShareRow) => ({
    object: 'analytics_share' as const,
    id: row.id,
    linkId: row.link_id,
    url: `${deps.publicBaseUrl}/analytics/${row.id}`,
    status: shareStatus(row),
    passwordProtected: row.password_hash !== null,
    expiresAt: row.expires_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
  });

  app.post('/links/:id/analytics/shares', {
    schema: {
      tags, operationId: 'createAnalyticsShare', summary: 'Share a link\'s analytics as a public page',
      description: `Makes a page at \`/analytics/{shareId}\` showing the link's analytics (scans over time, countries, devices, browsers, referrers, A/B variants, QR versus click) to whoever has its URL, updated live as the link is scanned, until it expires or is revoked (then 404). With a password, the page asks for it first. Needs links:write. At most ${LIVE_SHARES_PER_LINK} active shares per link (409 too_many_shares).`,
      params: LinkParams,
      body: ref(CreateAnalyticsShareBody),
      response: { 201: withRateLimitHeaders(AnalyticsShare, 'The share.'), ...errorResponses(...API_BODY_ERRORS, 404, 409) },
    },
  }, async (request, reply) => {
    const { expiresAt, password } = request.body;
    let expires: Date | null = null;
    if (expiresAt !== undefined) {
      const ms = Date.parse(expiresAt);
      if (ms <= Date.now()) throw new ApiError(400, 'expiry_in_past', 'expiresAt must be in the future.', [{ path: '/expiresAt', message: 'must be in the future' }]);
      if (ms > LATEST_TIME) throw new ApiError(400, 'validation_failed', 'expiresAt must be before 2106.', [{ path: '/expiresAt', message: 'too late' }]);
      expires = new Date(ms);
    }
    const made = await deps.shares.create(request.linksAuth.workspaceId, request.params.id, { expiresAt: expires, passwordHash: password === undefined ? null : await hashPassword(password) });
    if (!made.ok && made.reason === 'not_found') throw notFound('link');
    if (!made.ok) throw new ApiError(409, 'too_many_shares', `The link has ${LIVE_SHARES_PER_LINK} active shares; revoke one first.`);
    return reply.status(201).send(toShare(made.share));
  });

  app.get('/links/:id/analytics/shares', {
    schema: {
      tags, operationId: 'listAnalyticsShares', summary: 'List a link\'s analytics shares',
      description: 'Needs analytics:read. Newest first, expired and revoked ones included; the password is never answered.',
      params: LinkParams,
      response: { 200: withRateLimitHeaders(AnalyticsShareList, 'The shares.'), ...errorResponses(...API_ERRORS, 404) },
    },
  }, async (request) => {
    const rows = await deps.shares.list(request.linksAuth.workspaceId, request.params.id);
    if (!rows) throw notFound('link');
    return { object: 'list' as const, data: rows.map(toShare) };
  });

  app.delete('/links/:id/analytics/shares/:shareId', {
    schema: {
      tags, operationId: 'revokeAnalyticsShare', summary: 'Revoke an analytics share',
      description: 'Needs links:write. From the moment it answers the page answers 404 on every ingress, its open live streams end within seconds, and those who gave its password must give it to a new share. Revoking a revoked share changes nothing.',
      params: ShareParams,
      response: { 200: withRateLimitHeaders(AnalyticsShare, 'The revoked share.'), ...errorResponses(...API_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await deps.shares.revoke(request.linksAuth.workspaceId, request.params.id, request.params.shareId);
    if (!row) throw notFound('analytics share');
    return toShare(row);
  });

  app.post('/analytics/page-tokens', {
    schema: {
      tags, operationId: 'createAnalyticsPageToken', summary: 'Open the workspace\'s analytics page by URL',
      description: 'Needs analytics:read. A token for the workspace\'s analytics page (`/analytics?token=…`: every link\'s analytics, each link\'s own, updated live), working until it expires or the key that made it is revoked or loses analytics:read. The token is in this response only.',
      body: ref(CreatePageTokenBody),
      response: { 201: withRateLimitHeaders(PageToken, 'The token and the page\'s URL.'), ...errorResponses(...API_BODY_ERRORS) },
    },
  }, async (request, reply) => {
    const expiresAt = new Date(Date.now() + (request.body.expiresInSeconds ?? 3600) * 1000);
    const { workspaceId, keyId } = request.linksAuth;
    const token = await deps.sessions.create({ workspaceId, keyId }, expiresAt);
    return reply.status(201).send({ object: 'analytics_page_token' as const, token, url: `${deps.publicBaseUrl}/analytics?token=${token}`, expiresAt: expiresAt.toISOString() });
  });
}
