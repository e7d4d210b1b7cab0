// Wires the redirect path: the link cache (from links.changelog, this process's
// own writes, Postgres for the misses and, every few seconds, for the links
// changed since: link-revalidator.ts), click IDs,
// the scan journal (shipped to the `scans` topic by its own thread) and the route.
import type { ShortLinksAtRoot } from '../../platform/http/root-short-links.ts';
import type { App } from '../../platform/http/server.ts';
import type { Platform } from '../../platform/platform.ts';
import type { RawScan } from '../scans/raw-scan.ts';
import type { RawOrphanVisit } from '../orphans/orphan-visit.ts';
import { ScanJournal } from '../scans/scan-journal.ts';
import { toLinkState, type LinkState } from '../changelog/link-state.ts';
import type { LinkRow } from '../short-links/link-store.ts';
import { LinkCache } from './link-cache.ts';
import { LinkReadThrough } from './link-read-through.ts';
import { LinkRevalidator } from './link-revalidator.ts';
import { redirectRoutes } from './redirect-route.ts';
import { ScanLimitGuard } from './scan-limit-guard.ts';
import { Geo } from '../scans/geo.ts';
import { encodeJournalLine } from '../scans/journal-line.ts';
import { VisitorCountry } from './visitor-country.ts';
import { routingOf } from './link-routing.ts';
import type { LinksServices } from '../wiring.ts';
import type { ServedDomains } from '../domains/served-domains.ts';

export interface Redirects {
  cache: LinkCache;
  readThrough: LinkReadThrough;
  revalidator: LinkRevalidator;
  /** Scans, and branded domains' orphan visits. */
  journal: ScanJournal<RawScan | RawOrphanVisit>;
  /** Which hosts serve which links (GET /:shortId/qr resolves its Host as the redirect does). */
  domains: ServedDomains;
  /** Links whose ID a root route took later, answered as GET /:shortId (platform/http/root-short-links.ts). */
  atRoot: ShortLinksAtRoot;
}

export async function registerRedirects(app: App, platform: Platform, links: LinksServices, domains: ServedDomains): Promise<Redirects> {
  const { log } = platform;
  const { config } = links;
  const cache = new LinkCache(platform.kafka, platform.registry, config.TOPIC_PREFIX, log, (err) => platform.shutdown.fail('consumer link-cache', err));
  // The shipper thread looks every scan up in the IP database: a missing file stops the start here, not the thread later.
  Geo.open().close();
  const journal = new ScanJournal<RawScan | RawOrphanVisit>({ dir: links.redirects.journalDir, config, log, encode: encodeJournalLine });
  // The redirects' lookup is made once a link with geo destinations is known (at warm-up or later).
  const countries = new VisitorCountry(log);
  cache.onChange((state) => void (routingOf(state).geo !== null && countries.load()));
  await Promise.all([cache.start(), journal.start(), domains.start()]);
  // Links written through this ingress are in its cache before the write is answered.
  const stopLocal = links.changelog.onLocalChange((state) => cache.apply(state));
  // Links written through other ingresses, should their changelog messages not arrive (Kafka down).
  const revalidator = new LinkRevalidator(platform.pg, cache, links.redirects.revalidateMs, log);
  await revalidator.start();
  const readThrough = new LinkReadThrough(cache, {
    read: async (shortId, domainId): Promise<LinkState | undefined> => {
      const { rows } = domainId === null
        ? await platform.pg.query<LinkRow>('SELECT * FROM links WHERE domain_id IS NULL AND short_id = $1', [shortId])
        : await platform.pg.query<LinkRow>('SELECT * FROM links WHERE domain_id = $1 AND short_id = $2', [domainId, shortId]);
      return rows[0] ? toLinkState(rows[0]) : undefined;
    },
    missCacheSize: links.redirects.missCacheSize,
    missCacheMs: links.redirects.missCacheMs,
    log,
  });
  const atRoot = await redirectRoutes(app, {
    cache,
    readThrough,
    domains,
    scanLimits: new ScanLimitGuard(platform.redis, links.lifetimeScans, links.redirects.scanLimitSeedWaitMs),
    clickIds: links.clickIds,
    redis: platform.redis,
    log,
    record: (event) => journal.append(event),
    redirectsPerMinute: links.redirects.perMinutePerIp,
    countries,
    passwordHashOf: async (linkId) => (await platform.pg.query<{ password_hash: string | null }>('SELECT password_hash FROM links WHERE id = $1', [linkId])).rows[0]?.password_hash ?? null,
  });
  // After the server stopped taking requests: ship what is journaled, then stop following links.
  app.addHook('onClose', async () => {
    stopLocal();
    domains.stop();
    await revalidator.stop();
    await journal.stop();
    await cache.stop();
  });
  return { cache, readThrough, revalidator, journal, domains, atRoot };
}
