// The ingress: the HTTP process. It only does what must be answered now and
// publishes the rest to topics. Feature routes are registered here.
import type { Platform } from './platform/platform.ts';
import { buildServer, type App } from './platform/http/server.ts';
import { registerLinksApi } from './links/links-api.ts';
import { registerRedirects, type Redirects } from './links/redirect/redirects.ts';

export async function buildIngress(platform: Platform): Promise<App & { redirects: Redirects }> {
  const { config } = platform;
  const trustProxy = config.TRUSTED_PROXIES.split(',').map((s) => s.trim()).filter(Boolean);
  const app = await buildServer({
    log: platform.log,
    checks: platform.checks,
    trustProxy,
    openapi: {
      title: 'Link, QR code and conversion API',
      version: '1.0.0',
      description: 'Dynamic short links, scan analytics, QR codes and barcodes, conversions and signed scan webhooks. Errors share one body: `{ "error": { "code", "message", "requestId", "details"? } }`.',
      serverUrl: config.PUBLIC_BASE_URL,
    },
  });
  const links = await registerLinksApi(app, platform);
  // Publishes link changes that a crash or a Kafka outage left in the outbox.
  links.changelog.startRelay();
  app.addHook('onClose', () => links.changelog.stopRelay());
  // Publishes conversions a crash or a Kafka outage left unpublished.
  links.conversions.startRelay();
  app.addHook('onClose', () => links.conversions.stopRelay());
  const redirects = await registerRedirects(app, platform);
  await app.ready();
  return Object.assign(app, { redirects });
}
