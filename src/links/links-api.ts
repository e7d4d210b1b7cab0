// The link service's HTTP surface: /api/v1 (workspace API keys, limits),
// /admin/v1 (operator token) and the public OpenAPI document.
import type { Platform } from '../platform/platform.ts';
import type { App } from '../platform/http/server.ts';
import { createApiAuth } from './auth/api-auth.ts';
import { adminRoutes } from './admin/admin-routes.ts';
import { analyticsRoutes } from './analytics/analytics-routes.ts';
import { CampaignStore } from './campaigns/campaign-store.ts';
import { campaignRoutes } from './campaigns/campaign-routes.ts';
import { LinkChangelog } from './changelog/link-changelog.ts';
import { LinkStore } from './links/link-store.ts';
import { linkRoutes } from './links/link-routes.ts';
import { ApiKeys } from './workspaces/api-keys.ts';
import { Workspaces } from './workspaces/workspaces.ts';

export interface LinksApi {
  changelog: LinkChangelog;
}

export async function registerLinksApi(app: App, platform: Platform): Promise<LinksApi> {
  const { config, pg, redis, log } = platform;
  const keys = new ApiKeys(pg);
  const workspaces = new Workspaces(pg);
  const store = new LinkStore(pg);
  const campaigns = new CampaignStore(pg);
  const changelog = new LinkChangelog(pg, platform.publisher, log);
  const authenticate = createApiAuth({
    keys,
    redis,
    log,
    apiPerMinute: config.API_RATE_LIMIT_PER_MINUTE,
    authAttemptsPerMinute: config.AUTH_ATTEMPTS_PER_MINUTE,
  });

  await app.register(async (api) => {
    api.addHook('onRequest', authenticate);
    await linkRoutes(api, { store, changelog, baseUrl: config.PUBLIC_BASE_URL });
    await campaignRoutes(api, campaigns);
    await analyticsRoutes(api, { clickhouse: platform.clickhouse, pg });
  }, { prefix: '/api/v1' });

  await app.register(async (admin) => adminRoutes(admin, { workspaces, keys, adminToken: config.ADMIN_TOKEN }), { prefix: '/admin/v1' });

  app.get('/api/v1/openapi', { schema: { tags: ['ops'], security: [], summary: 'This OpenAPI 3.1 document (public).' } }, async () => app.swagger());
  return { changelog };
}
