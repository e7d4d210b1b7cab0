// The visitor's country for links with geo destinations, from the same IP
// database as the scans (geo.ts): the same memory as the shipper thread's, once
// the cache holds a link with geo destinations; a geo redirect that comes before
// the lookup is ready waits for it, once.
import { Geo } from '../scans/geo.ts';
import type { Logger } from '../../platform/logger.ts';

export class VisitorCountry {
  private readonly log: Logger;
  private geo: Geo | undefined;
  private loading: Promise<Geo | undefined> | undefined;

  constructor(log: Logger) {
    this.log = log;
  }

  /** Starts loading the database, if not already. */
  load(): Promise<Geo | undefined> {
    this.loading ??= Geo.load().then(
      (geo) => (this.geo = geo),
      (err) => {
        // Without the database every visitor gets the link's other destinations; tried again on the next geo link.
        this.log.error({ err }, 'IP database not loaded: geo destinations are not used');
        this.loading = undefined;
        return undefined;
      },
    );
    return this.loading;
  }

  /** The country (ISO 3166-1 alpha-2) of the IP, null when unknown; a promise only while the database loads. */
  of(ip: string): string | null | Promise<string | null> {
    if (this.geo) return this.geo.lookup(ip).country;
    return this.load().then((geo) => (geo ? geo.lookup(ip).country : null));
  }
}
