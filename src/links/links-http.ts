// The link product's HTTP surface: its part of /api/v1 (behind workspace API
// keys and the workspace limit), its operator routes under /admin/v1, its
// tools on the MCP endpoint (for link keys), and its root routes: redirects
// (/:shortId). The platform's API shell and MCP endpoint own the paths.
import type { ApiProduct } from '../platform/http/api-shell.ts';
import type { AttemptGuard } from '../platform/http/attempt-guard.ts';
import type { OpenApiProduct } from '../platform/http/openapi.ts';
import type { App } from '../platform/http/server.ts';
import type { Platform } from '../platform/platform.ts';
import { adminRoutes } from './admin/admin-routes.ts';
import { analyticsRoutes } from './analytics/analytics-routes.ts';
import { createApiAuth, hasLinksKey, requireRouteScopes } from './auth/api-auth.ts';
import { campaignRoutes } from './campaigns/campaign-routes.ts';
import { conversionRoutes } from './conversions/conversion-routes.ts';
import { linksMcpProduct, type LinksToolContext } from './mcp/mcp-api.ts';
import type { McpProduct } from '../platform/mcp/mcp-product.ts';
import { qrRoutes } from './qr/qr-routes.ts';
import { publicQrRoute } from './qr/public-qr-route.ts';
import type { RenderPool } from './qr/render-pool.ts';
import { linkKey } from './changelog/link-state.ts';
import { registerRedirects, type Redirects } from './redirect/redirects.ts';
import { resetScanLimitCounter } from './redirect/scan-limit-guard.ts';
import { linkRoutes } from './short-links/link-routes.ts';
import { linkImportRoute } from './short-links/link-import-route.ts';
import { lowerCaseIds } from './lower-case-ids.ts';
import { webhookRoutes } from './webhooks/webhook-routes.ts';
import { keyRoutes } from './workspaces/key-routes.ts';
import { createResolver } from '../platform/dns.ts';
import { listSetting } from '../platform/config.ts';
import { domainAdminRoutes } from './domains/domain-admin-routes.ts';
import { domainRoutes } from './domains/domain-routes.ts';
import { orphanVisitRoutes } from './orphans/orphan-visit-routes.ts';
import { privacyRoutes } from './privacy/privacy-routes.ts';
import { baseDomainHosts, hostOfUrl } from './domains/host-names.ts';
import { LinkDomains } from './domains/link-domains.ts';
import { ServedDomains } from './domains/served-domains.ts';
import type { LinksServices } from './wiring.ts';
import { ScanHub } from './live/scan-hub.ts';
import { AnalyticsQueries } from './analytics/analytics-queries.ts';
import { pageRoutes } from './analytics-page/page-routes.ts';
import { PageSessions } from './analytics-page/page-sessions.ts';
import { PageStreams } from './analytics-page/page-stream.ts';
import { shareRoutes } from './analytics-page/share-routes.ts';
import { ShareStore } from './analytics-page/share-store.ts';
import { liveRoutes } from './live/live-routes.ts';

/** The link product's tags (one group in the OpenAPI document) and its key's security scheme. */
export const linksOpenApi: OpenApiProduct = {
  name: 'Links',
  tags: [
    { name: 'links', description: 'Dynamic short links: create, list, change, deactivate, bulk operations.' },
    { name: 'campaigns', description: 'Folders of links.' },
    { name: 'link-domains', description: 'Branded domains for short links: DNS records, verification, the workspace\'s default.' },
    { name: 'analytics', description: 'Scan analytics and exports, from ClickHouse.' },
    { name: 'analytics-pages', description: 'Analytics as web pages for people (no key): a link\'s shared page, the workspace\'s own page, their forms and live streams. HTML, not API responses.' },
    { name: 'privacy', description: 'Erasing a visitor\'s or a link\'s scans, and how long the workspace keeps scans.' },
    { name: 'conversions', description: 'Conversions and tracked clicks of a scan, and the funnel.' },
    { name: 'webhooks', description: 'Signed webhooks (scan.created, link.created, link.updated, link.deleted, conversion.created) and their delivery log.' },
    { name: 'qr', description: 'QR codes and barcodes.' },
    { name: 'redirect', description: 'The short link itself.' },
    { name: 'keys', description: 'The workspace\'s API keys and their scopes (keys:write).' },
    { name: 'workspaces', description: 'Operators: workspaces, plans and API keys (ADMIN_TOKEN).' },
  ],
  securitySchemes: {
    bearerAuth: { type: 'http', scheme: 'bearer', description: 'Workspace API key (lk_live_…), Enterprise plan.' },
  },
};

export interface LinksHttp {
  api: ApiProduct;
  /** Its part of the MCP endpoint. */
  mcp: McpProduct<LinksToolContext>;
  /** Every workspace's live scans, from the `scans` topic (live/scan-hub.ts); its consumer runs while streams are open (and a while after). */
  liveScans: ScanHub;
  /** Registers the root routes (redirects, public QR codes); call after the API shell and the MCP endpoint. */
  registerRoot: (app: App) => Promise<Redirects>;
}

export function linksHttp(platform: Platform, links: LinksServices, guard: AttemptGuard): LinksHttp {
  const { redis, log, pg } = platform;
  const authenticate = createApiAuth({ keys: links.keys, redis, log, guard, apiPerMinute: links.config.API_RATE_LIMIT_PER_MINUTE });
  const linkWrites = { store: links.links, changelog: links.changelog, baseUrl: links.shortLinkBase };
  // Which hosts serve which links: read by redirects, refreshed at once by the domain routes.
  const served = new ServedDomains(pg, baseDomainHosts(links.config), links.redirects.revalidateMs, log);
  const domains = {
    domains: new LinkDomains(pg, (name) => served.isBaseHost(name)),
    targets: { cname: links.config.LINK_DOMAIN_CNAME_TARGET || hostOfUrl(links.shortLinkBase), addresses: listSetting(links.config.LINK_DOMAIN_A_TARGETS) },
    onServedChange: () => served.refresh(),
    urlProblem: (value: string) => links.links.destinationProblem(value),
  };
  links.links.refuseUrlsOn(() => served.servingHosts());
  // One render pool for the API's images and the public QR URL.
  let pool: RenderPool | undefined;
  const renderPool = () => (pool ??= links.renderPool());
  const liveScans = new ScanHub({
    kafka: platform.kafka,
    registry: platform.registry,
    topicPrefix: links.config.TOPIC_PREFIX,
    log,
    retentionMs: links.config.LIVE_STREAM_RETENTION_MS,
    maxPerPartition: links.config.LIVE_STREAM_RING_PER_PARTITION,
    idleStopMs: links.config.LIVE_STREAM_IDLE_STOP_MS,
    onFailed: (err) => platform.shutdown.fail('consumer live-scans', err),
  });
  // Analytics pages (issue 54): shares and sessions for the API and the pages alike.
  const shares = new ShareStore(pg);
  const pageSessions = new PageSessions(pg);

  const api: ApiProduct = {
    name: 'links',
    securityScheme: 'bearerAuth',
    claims: hasLinksKey,
    authenticate,
    register: async (scope) => {
      scope.decorateRequest('linksAuth', null as never);
      scope.addHook('preValidation', lowerCaseIds);
      scope.addHook('onClose', () => renderPool().close());
      // Before any route: each route gets its scope, and a key without it is refused.
      requireRouteScopes(scope);
      await linkRoutes(scope, { ...linkWrites, onScanLimitChanged: (id) => resetScanLimitCounter(redis, id).catch(() => {}) });
      await linkImportRoute(scope, { store: links.links, changelog: links.changelog, ...links.imports });
      await campaignRoutes(scope, links.campaigns);
      await domainRoutes(scope, { ...domains, resolver: createResolver(links.config.LINK_DNS_SERVERS) });
      await analyticsRoutes(scope, { clickhouse: platform.clickhouse, pg, links: links.links, campaigns: links.campaigns });
      await shareRoutes(scope, { shares, sessions: pageSessions, publicBaseUrl: links.config.PUBLIC_BASE_URL });
      await liveRoutes(scope, {
        hub: liveScans,
        links: links.links,
        pg,
        redis,
        log,
        heartbeatMs: links.config.LIVE_STREAM_HEARTBEAT_MS,
        maxBufferedBytes: links.config.LIVE_STREAM_MAX_BUFFERED_BYTES,
        keyCheckMs: links.config.LIVE_STREAM_KEY_CHECK_MS,
      });
      await orphanVisitRoutes(scope, { clickhouse: platform.clickhouse });
      await privacyRoutes(scope, { pg, clickIds: links.clickIds, links: links.links });
      await conversionRoutes(scope, { conversions: links.conversions, funnels: links.funnels });
      await webhookRoutes(scope, links.webhooks);
      await qrRoutes(scope, { pool: renderPool(), pg, shortLinkBase: links.shortLinkBase, images: links.qrImages });
      await keyRoutes(scope, links.keys);
    },
    registerAdmin: async (admin) => {
      admin.addHook('preValidation', lowerCaseIds);
      await adminRoutes(admin, { workspaces: links.workspaces, keys: links.keys });
      await domainAdminRoutes(admin, domains);
    },
  };

  return {
    api,
    liveScans,
    // Link keys on POST /api/mcp: the same keys and the same limit as /api/v1, through `authenticate`.
    mcp: linksMcpProduct({
      authenticate,
      links: linkWrites,
      campaigns: links.campaigns,
      pg,
      clickhouse: platform.clickhouse,
      conversions: links.conversions,
      funnels: links.funnels,
      apiPerMinute: links.config.API_RATE_LIMIT_PER_MINUTE,
    }),
    registerRoot: async (app) => {
      const redirects = await registerRedirects(app, platform, links, served);
      // Open streams end (`end: shutdown`) before the server waits for its connections to close.
      app.addHook('preClose', async () => liveScans.endAll());
      app.addHook('onClose', () => liveScans.stop());
      const pageStreams = new PageStreams({
        hub: liveScans, log, heartbeatMs: links.config.LIVE_STREAM_HEARTBEAT_MS, maxBufferedBytes: links.config.LIVE_STREAM_MAX_BUFFERED_BYTES,
        checkMs: links.config.LIVE_STREAM_KEY_CHECK_MS,
      });
      app.addHook('preClose', async () => pageStreams.close());
      await pageRoutes(app, {
        pg, redis, log, guard, keys: links.keys, shares, sessions: pageSessions, queries: new AnalyticsQueries(platform.clickhouse), clickhouse: platform.clickhouse,
        streams: pageStreams, shortLinkBase: links.shortLinkBase,
      });
      // GET /:shortId/qr finds links as the redirect does.
      await publicQrRoute(app, {
        pool: renderPool(),
        redis,
        log,
        shortLinkBase: links.shortLinkBase,
        findLink: (host, shortId) => {
          const domainId = served.resolve(host);
          if (domainId === undefined) return undefined;
          return redirects.cache.get(linkKey(domainId, shortId)) ?? redirects.readThrough.find(shortId, domainId);
        },
      });
      return redirects;
    },
  };
}
