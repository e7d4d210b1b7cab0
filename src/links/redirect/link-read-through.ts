// What a redirect does when a short ID is not in the link cache: the link may
// have been created a moment ago on another ingress, whose changelog message
// this one has not read yet, so it asks Postgres. Only misses come here (a
// cache hit never touches the database), and they are held down: concurrent
// misses of one short ID share one query, and a short ID Postgres does not know
// is remembered as missing for a short while (a negative cache bounded in size
// and time), so a client trying random short IDs costs at most one query per ID
// per window, and the window's memory is capped. A link found is put in the
// cache through LinkCache.apply, which never replaces a newer version. Links are
// named by their key (linkKey): the short ID on the base domain, `<domain id>/<short
// ID>` on a branded one, so a miss on one domain is not a miss on another.
import type { Logger } from '../../platform/logger.ts';
import { linkKey, type LinkState } from '../changelog/link-state.ts';
import { SHORT_ID_PATTERN } from '../short-links/short-id.ts';
import type { LinkCache } from './link-cache.ts';

const SHORT_ID = new RegExp(SHORT_ID_PATTERN);

export interface ReadThroughOptions {
  /** Reads the link with this short ID on this domain (null: the base domain) from the system of record. */
  read: (shortId: string, domainId: string | null) => Promise<LinkState | undefined>;
  /** Misses remembered at most (the oldest are forgotten first); 0 remembers none. */
  missCacheSize: number;
  /** How long a miss is remembered. */
  missCacheMs: number;
  log: Logger;
}

export class LinkReadThrough {
  private readonly cache: LinkCache;
  private readonly options: ReadThroughOptions;
  /** Link key → when its miss is forgotten; in insertion order, which is expiry order (one TTL for all). */
  private readonly misses = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<LinkState | undefined>>();
  /** Queries sent to the database so far (tests and metrics). */
  queries = 0;

  constructor(
    cache: LinkCache,
    options: ReadThroughOptions,
  ) {
    this.cache = cache;
    this.options = options;
    // A link that arrives (changelog or a local write) is no longer missing.
    cache.onChange((link) => this.misses.delete(linkKey(link.domainId, link.shortId)));
  }

  /** Misses remembered now. */
  get remembered(): number {
    return this.misses.size;
  }

  /** The link of a short ID on a domain (null: the base domain) the cache does not have, or undefined when there is none. */
  find(shortId: string, domainId: string | null = null): Promise<LinkState | undefined> {
    const key = linkKey(domainId, shortId);
    const cached = this.cache.get(key);
    if (cached) return Promise.resolve(cached);
    if (!SHORT_ID.test(shortId) || this.isRememberedMiss(key)) return Promise.resolve(undefined);
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.readOnce(key, shortId, domainId).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async readOnce(key: string, shortId: string, domainId: string | null): Promise<LinkState | undefined> {
    this.queries++;
    let link: LinkState | undefined;
    try {
      link = await this.options.read(shortId, domainId);
    } catch (err) {
      // Not remembered: the next request asks again.
      this.options.log.warn({ err, shortId, domainId }, 'link read-through failed; answering not found');
      return undefined;
    }
    if (link) {
      this.cache.apply(link);
      // The cache may hold a newer version (the changelog arrived meanwhile): answer with that.
      return this.cache.get(key) ?? link;
    }
    this.rememberMiss(key);
    return undefined;
  }

  private isRememberedMiss(key: string): boolean {
    const until = this.misses.get(key);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.misses.delete(key);
    return false;
  }

  private rememberMiss(key: string): void {
    const { missCacheSize, missCacheMs } = this.options;
    if (missCacheSize === 0) return;
    this.misses.delete(key);
    while (this.misses.size >= missCacheSize) this.misses.delete(this.misses.keys().next().value!);
    this.misses.set(key, Date.now() + missCacheMs);
  }
}
