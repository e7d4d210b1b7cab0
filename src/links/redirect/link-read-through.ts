// What a redirect does when a short ID is not in the link cache: the link may
// have been created a moment ago on another ingress, whose changelog message
// this one has not read yet, so it asks Postgres. Only misses come here (a
// cache hit never touches the database), and they are held down: concurrent
// misses of one short ID share one query, and a short ID Postgres does not know
// is remembered as missing for a short while (a negative cache bounded in size
// and time), so a client trying random short IDs costs at most one query per ID
// per window, and the window's memory is capped. A link found is put in the
// cache through LinkCache.apply, which never replaces a newer version.
import type { Logger } from '../../platform/logger.ts';
import type { LinkState } from '../changelog/link-state.ts';
import { SHORT_ID_PATTERN } from '../short-links/short-id.ts';
import type { LinkCache } from './link-cache.ts';

const SHORT_ID = new RegExp(SHORT_ID_PATTERN);

export interface ReadThroughOptions {
  /** Reads the link with this short ID from the system of record. */
  read: (shortId: string) => Promise<LinkState | undefined>;
  /** Misses remembered at most (the oldest are forgotten first); 0 remembers none. */
  missCacheSize: number;
  /** How long a miss is remembered. */
  missCacheMs: number;
  log: Logger;
}

export class LinkReadThrough {
  /** Short ID → when its miss is forgotten; in insertion order, which is expiry order (one TTL for all). */
  private readonly misses = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<LinkState | undefined>>();
  /** Queries sent to the database so far (tests and metrics). */
  queries = 0;

  constructor(
    private readonly cache: LinkCache,
    private readonly options: ReadThroughOptions,
  ) {
    // A link that arrives (changelog or a local write) is no longer missing.
    cache.onChange((link) => this.misses.delete(link.shortId));
  }

  /** Misses remembered now. */
  get remembered(): number {
    return this.misses.size;
  }

  /** The link of a short ID the cache does not have, or undefined when there is none. */
  find(shortId: string): Promise<LinkState | undefined> {
    const cached = this.cache.get(shortId);
    if (cached) return Promise.resolve(cached);
    if (!SHORT_ID.test(shortId) || this.isRememberedMiss(shortId)) return Promise.resolve(undefined);
    let pending = this.inFlight.get(shortId);
    if (!pending) {
      pending = this.readOnce(shortId).finally(() => this.inFlight.delete(shortId));
      this.inFlight.set(shortId, pending);
    }
    return pending;
  }

  private async readOnce(shortId: string): Promise<LinkState | undefined> {
    this.queries++;
    let link: LinkState | undefined;
    try {
      link = await this.options.read(shortId);
    } catch (err) {
      // Not remembered: the next request asks again.
      this.options.log.warn({ err, shortId }, 'link read-through failed; answering not found');
      return undefined;
    }
    if (link) {
      this.cache.apply(link);
      // The cache may hold a newer version (the changelog arrived meanwhile): answer with that.
      return this.cache.get(shortId) ?? link;
    }
    this.rememberMiss(shortId);
    return undefined;
  }

  private isRememberedMiss(shortId: string): boolean {
    const until = this.misses.get(shortId);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.misses.delete(shortId);
    return false;
  }

  private rememberMiss(shortId: string): void {
    const { missCacheSize, missCacheMs } = this.options;
    if (missCacheSize === 0) return;
    this.misses.delete(shortId);
    while (this.misses.size >= missCacheSize) this.misses.delete(this.misses.keys().next().value!);
    this.misses.set(shortId, Date.now() + missCacheMs);
  }
}
