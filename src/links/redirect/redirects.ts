// Wires the redirect path: the link cache (from links.changelog), geolocation,
// click IDs, the scan journal (to the `scans` topic) and the route.
import { scansTopic } from '../../../topics/scans.ts';
import type { App } from '../../platform/http/server.ts';
import type { Platform } from '../../platform/platform.ts';
import { ClickIds } from '../scans/click-id.ts';
import type { ScanEvent } from '../scans/scan-event.ts';
import { ScanJournal } from '../scans/scan-journal.ts';
import { Geo } from './geo.ts';
import { LinkCache } from './link-cache.ts';
import { redirectRoutes } from './redirect-route.ts';
import { ScanLimitGuard } from './scan-limit-guard.ts';

export interface Redirects {
  cache: LinkCache;
  journal: ScanJournal;
}

export async function registerRedirects(app: App, platform: Platform): Promise<Redirects> {
  const { config, log } = platform;
  const [geo, cache] = await Promise.all([
    Geo.load(),
    (async () => {
      const c = new LinkCache(platform.kafka, platform.registry, config.TOPIC_PREFIX, log);
      await c.start();
      return c;
    })(),
  ]);
  const journal = new ScanJournal({
    dir: config.SCAN_JOURNAL_DIR,
    log,
    send: (events) => platform.publisher.publish<ScanEvent>(scansTopic, events.map((e) => ({ key: e.workspaceId, value: e }))),
  });
  journal.start();
  await redirectRoutes(app, {
    cache,
    scanLimits: new ScanLimitGuard(platform.redis, platform.pg),
    geo,
    clickIds: new ClickIds(config.CLICK_ID_SECRET),
    redis: platform.redis,
    log,
    record: (event) => journal.append(event),
    redirectsPerMinute: config.REDIRECTS_PER_MINUTE_PER_IP,
    secret: config.CLICK_ID_SECRET,
  });
  // After the server stopped taking requests: ship what is journaled, then stop following links.
  app.addHook('onClose', async () => {
    await journal.stop();
    await cache.stop();
  });
  return { cache, journal };
}
