// The visitor's country for links with geo destinations, from the same IP
// database as the scans (geo.ts), opened by the event loop once the cache holds
// a link with geo destinations; the files themselves are in the kernel's page
// cache, shared with the shipper thread.
import { Geo } from '../scans/geo.ts';
import type { Logger } from '../../platform/logger.ts';

export class VisitorCountry {
  private readonly log: Logger;
  private geo: Geo | undefined;

  constructor(log: Logger) {
    this.log = log;
  }

  /** Opens the database, if not already; undefined when it cannot be opened (tried again on the next call). */
  load(): Geo | undefined {
    if (this.geo) return this.geo;
    try {
      this.geo = Geo.open();
    } catch (err) {
      // Without the database every visitor gets the link's other destinations.
      this.log.error({ err }, 'IP database not opened: geo destinations are not used');
    }
    return this.geo;
  }

  /** The country (ISO 3166-1 alpha-2) of the IP, null when unknown. */
  of(ip: string): string | null {
    return this.load()?.lookup(ip).country ?? null;
  }
}
