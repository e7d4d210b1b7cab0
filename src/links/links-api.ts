// The link service's HTTP surface: /api/v1 (workspace API keys, limits),
// /admin/v1 (operator token) and the public OpenAPI document.
import { listSetting } from '../platform/config.ts';
import type { Platform } from '../platform/platform.ts';
import { errorBody, type App } from '../platform/http/server.ts';
import { serveOpenApiDocument } from '../platform/http/openapi.ts';
import { createApiAuth, createAttemptGuard } from './auth/api-auth.ts';
import { adminRoutes } from './admin/admin-routes.ts';
import { analyticsRoutes } from './analytics/analytics-routes.ts';
import { CampaignStore } from './campaigns/campaign-store.ts';
import { campaignRoutes } from './campaigns/campaign-routes.ts';
import { LinkChangelog } from './changelog/link-changelog.ts';
import { conversionRoutes } from './conversions/conversion-routes.ts';
import { Conversions } from './conversions/conversions.ts';
import { FunnelQueries } from './conversions/funnel-query.ts';
import { LinkStore } from './short-links/link-store.ts';
import { linkRoutes } from './short-links/link-routes.ts';
import { registerMcp } from './mcp/mcp-api.ts';
import { resetScanLimitCounter } from './redirect/scan-limit-guard.ts';
import { ApiKeys } from './workspaces/api-keys.ts';
import { RenderPool } from './qr/render-pool.ts';
import { qrRoutes } from './qr/qr-routes.ts';
import { Workspaces } from './workspaces/workspaces.ts';
import { DeliveryLog } from './webhooks/delivery-log.ts';
import { DeliveryQueue } from './webhooks/delivery-queue.ts';
import { webhookRoutes } from './webhooks/webhook-routes.ts';
import { WebhookStore } from './webhooks/webhook-store.ts';

export interface LinksApi {
  changelog: LinkChangelog;
  conversions: Conversions;
}

export async function registerLinksApi(app: App, platform: Platform): Promise<LinksApi> {
  const { config, pg, redis, log } = platform;
  const keys = new ApiKeys(pg);
  const workspaces = new Workspaces(pg);
  const shortLinkBase = config.SHORT_LINK_BASE_URL || config.PUBLIC_BASE_URL;
  const store = new LinkStore(pg, new URL(shortLinkBase).host);
  const campaigns = new CampaignStore(pg);
  const changelog = new LinkChangelog(pg, platform.publisher, log);
  const conversions = new Conversions(pg, platform.publisher, log, config.CLICK_ID_SECRET);
  const funnels = new FunnelQueries(platform.clickhouse, pg);
  const renderPool = new RenderPool({ threads: config.RENDER_THREADS || undefined, maxQueue: config.RENDER_QUEUE || undefined });
  app.addHook('onClose', () => renderPool.close());
  const authenticate = createApiAuth({
    keys,
    redis,
    log,
    apiPerMinute: config.API_RATE_LIMIT_PER_MINUTE,
    authAttemptsPerMinute: config.AUTH_ATTEMPTS_PER_MINUTE,
  });

  await app.register(async (api) => {
    api.addHook('onRequest', authenticate);
    await linkRoutes(api, { store, changelog, baseUrl: shortLinkBase, onScanLimitChanged: (id) => resetScanLimitCounter(redis, id).catch(() => {}) });
    await campaignRoutes(api, campaigns);
    await analyticsRoutes(api, { clickhouse: platform.clickhouse, pg, links: store });
    await conversionRoutes(api, { conversions, funnels });
    await webhookRoutes(api, {
      store: new WebhookStore(pg, { allowHosts: listSetting(config.WEBHOOK_ALLOW_HOSTS), secretGraceMs: config.WEBHOOK_SECRET_GRACE_MS }),
      log: new DeliveryLog(pg),
      queue: new DeliveryQueue(pg, { baseMs: config.WEBHOOK_RETRY_BASE_MS, factor: config.WEBHOOK_RETRY_FACTOR }),
    });
    await qrRoutes(api, {
      pool: renderPool,
      pg,
      shortLinkBase,
      images: {
        timeoutMs: config.QR_IMAGE_FETCH_TIMEOUT_MS,
        maxBytes: config.QR_IMAGE_MAX_BYTES,
        allowHosts: listSetting(config.OUTBOUND_ALLOW_HOSTS),
      },
    });
    // Unknown /api/v1 paths pass through authentication too, so they carry the rate-limit headers.
    api.setNotFoundHandler((request, reply) => reply.status(404).send(errorBody(request.id, 'route_not_found', `No route for ${request.method} ${request.url.split('?')[0]}.`)));
  }, { prefix: '/api/v1' });

  const adminGuard = createAttemptGuard(redis, log, config.AUTH_ATTEMPTS_PER_MINUTE);
  await app.register(async (admin) => adminRoutes(admin, { workspaces, keys, adminToken: config.ADMIN_TOKEN, guard: adminGuard }), { prefix: '/admin/v1' });

  // POST /api/mcp (same keys and the same limit as /api/v1, through `authenticate`) and /.well-known/mcp.json.
  await registerMcp(app, {
    authenticate,
    links: { store, changelog, baseUrl: shortLinkBase },
    campaigns,
    pg,
    clickhouse: platform.clickhouse,
    conversions,
    funnels,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    apiPerMinute: config.API_RATE_LIMIT_PER_MINUTE,
  });

  serveOpenApiDocument(app, '/api/v1/openapi');
  return { changelog, conversions };
}
