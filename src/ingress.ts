// The ingress: the HTTP process. It only does what must be answered now and
// publishes the rest to topics. Feature routes are registered here.
import { Repeating } from './platform/background.ts';
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
  // Relays: publish link changes and conversions that a crash or a Kafka outage left unpublished (older than 2 s).
  for (const relay of [() => links.changelog.relayOnce(2000), () => links.conversions.relayOnce(2000)]) {
    const repeating = new Repeating(relay, 1000);
    repeating.start();
    app.addHook('onClose', () => repeating.stop());
  }
  const redirects = await registerRedirects(app, platform);
  await app.ready();
  return Object.assign(app, { redirects });
}
