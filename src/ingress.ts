// The ingress: the HTTP process. It only does what must be answered now and
// publishes the rest to topics. The platform owns the server and the shared
// prefixes; each product adds its part here.
import type { Platform } from './platform/platform.ts';
import { registerApiShell } from './platform/http/api-shell.ts';
import { createAttemptGuard } from './platform/http/attempt-guard.ts';
import { buildServer, type App } from './platform/http/server.ts';
import { RootShortLinks } from './platform/http/root-short-links.ts';
import { reportShadowedLinks } from './links/redirect/shadowed-links-report.ts';
import { startOutboxRelays } from './platform/outbox/start-outbox-relays.ts';
import type { Outbox } from './platform/outbox/outbox.ts';
import { linksHttp, linksOpenApi } from './links/links-http.ts';
import { wireLinks } from './links/wiring.ts';
import { mailHttp, mailOpenApi } from './mail/mail-http.ts';
import { startInboundSmtp } from './mail/inbound/inbound-smtp.ts';
import { relayTls } from './mail/relay/relay-tls.ts';
import { startSmtpRelay } from './mail/relay/smtp-relay.ts';
import { wireMail } from './mail/wiring.ts';
import type { Redirects } from './links/redirect/redirects.ts';
import type { Registry } from 'prom-client';
import { liveStreamGauges } from './links/live/live-gauges.ts';
import type { ScanHub } from './links/live/scan-hub.ts';
import { registerMcpEndpoint } from './platform/mcp/mcp-endpoint.ts';
import { resendNotFoundAtRoot } from './mail/resend/resend-errors.ts';
import { MCP_SERVICE_INFO, SERVICE_INFO, type ServiceConfig } from './service.ts';

export async function buildIngress(platform: Platform, config: ServiceConfig): Promise<App & { redirects: Redirects; outboxes: Outbox[]; liveScans: ScanHub; gauges: Array<(registry: Registry) => void>; inboundSmtpPort: number | undefined; relaySmtpPort: number | undefined }> {
  const trustProxy = config.TRUSTED_PROXIES.split(',').map((s) => s.trim()).filter(Boolean);
  // One allowance of failed credentials per IP, for every product's keys and the operator token;
  // API responses that checked no credential describe it (api-limit-headers.ts).
  const guard = createAttemptGuard(platform.redis, platform.log, config.AUTH_ATTEMPTS_PER_MINUTE);
  const app = await buildServer({
    log: platform.log,
    checks: platform.checks,
    trustProxy,
    ipv6LimitPrefixLength: config.IPV6_LIMIT_PREFIX_LENGTH,
    defaultAllowance: guard.allowance,
    notFoundBody: resendNotFoundAtRoot,
    openapi: { ...SERVICE_INFO, serverUrl: config.PUBLIC_BASE_URL, products: [linksOpenApi, mailOpenApi] },
  });
  const links = wireLinks(platform, config, { reservedShortIds: app.reservedPaths });
  const linksSurface = linksHttp(platform, links, guard);
  const mail = wireMail(platform, config);
  const mailSurface = mailHttp(platform, mail, guard);
  await registerApiShell(app, { products: [linksSurface.api, mailSurface.api], adminToken: config.ADMIN_TOKEN, guard });
  // Mail's root routes first: they reserve their paths (/emails, /events) before short links are checked against them.
  // Links made before a path was reserved are still served there (root-short-links.ts), once the redirects exist.
  const shortLinksAtRoot = new RootShortLinks();
  await mailSurface.registerRoot(app, shortLinksAtRoot);
  // POST /api/mcp and /.well-known/mcp.json: the key decides the product; a request with no product's key gets the link product's 401.
  await registerMcpEndpoint(app, { products: [linksSurface.mcp, mailSurface.mcp], service: MCP_SERVICE_INFO, publicBaseUrl: config.PUBLIC_BASE_URL, allowedOrigins: config.MCP_ALLOWED_ORIGINS });
  const redirects = await linksSurface.registerRoot(app);
  shortLinksAtRoot.bind(redirects.atRoot);
  // Publish what a crash or a Kafka outage left in the products' outboxes (items older than 2 s).
  const outboxes = [...links.outboxes, ...mail.outboxes];
  const relays = startOutboxRelays(outboxes);
  app.addHook('onClose', () => relays.stop());
  // Bounce and complaint reports arrive over SMTP.
  const inbound = config.MAIL_INBOUND_SMTP_PORT >= 0
    ? await startInboundSmtp({ pg: platform.pg, events: mail.events, log: platform.log, secret: config.MAIL_LINK_SECRET }, config.MAIL_INBOUND_SMTP_HOST, config.MAIL_INBOUND_SMTP_PORT)
    : undefined;
  if (inbound) app.addHook('onClose', () => inbound.close());
  // Submission over SMTP, for clients that do not speak HTTP.
  const relay = config.MAIL_RELAY_SMTP_PORT >= 0
    ? await startSmtpRelay(
      { keys: mail.keys, guard, limit: mailSurface.keyLimit, domains: mail.domains, messages: mail.messages, outbox: mail.messageOutbox, recipientLimits: mail.recipientLimits, log: platform.log, ipv6LimitPrefixLength: config.IPV6_LIMIT_PREFIX_LENGTH },
      relayTls(config), config.MAIL_RELAY_SMTP_HOST, config.MAIL_RELAY_SMTP_PORT,
    )
    : undefined;
  if (relay) app.addHook('onClose', () => relay.close());
  await app.ready();
  // Every route is registered now: links made before their ID became a route's path are named once.
  void reportShadowedLinks(platform.pg, app.reservedPaths.list(), platform.log);
  return Object.assign(app, { redirects, outboxes, liveScans: linksSurface.liveScans, gauges: [liveStreamGauges(linksSurface.liveScans)], inboundSmtpPort: inbound?.port, relaySmtpPort: relay?.port });
}
