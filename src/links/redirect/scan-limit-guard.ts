// Admission for links with a scan limit, exact across ingress instances: each
// redirect of such a link takes one unit from a Redis counter of the link's
// admitted scans, and is refused once the count would pass the limit. The
// counter holds the link's lifetime scans; when Redis does not have it (first
// scan since Redis started, or since the limit changed), it is seeded from the
// scans stored in ClickHouse (lifetime-scans.ts). The scan sink remains the
// authority that closes the link for good in links.changelog
// (scan-limit-closer.ts); this guard only stops concurrent scans from
// overshooting while that news travels.
//
// How far over the limit a link can go: 0 while Redis is up. After a Redis
// restart the seed lags by the scans still in the pipeline (normally well under
// a second's worth). If Redis is unreachable, or ClickHouse cannot seed the
// counter within SCAN_LIMIT_SEED_WAIT_MS, redirects are let through and the
// sink's closing (about a second after the scans are stored) is the only bound.
import type { Redis } from '../../platform/redis.ts';
import type { CountedLink, LifetimeScans } from '../scans/lifetime-scans.ts';

/** A seed that failed is not tried again for this long (redirects are let through meanwhile). */
const SEED_RETRY_MS = 1000;

// KEYS[1] = counter; ARGV[1] = limit. Returns -1 when the counter must be seeded, 1 admitted, 0 refused.
const TAKE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local n = redis.call('INCR', KEYS[1])
if n > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return 0
end
return 1
`;

export const scanLimitKey = (linkId: string) => `scan-limit:${linkId}`;

/**
 * Forgets a link's counter when its limit changes: while a link had no limit its scans were not
 * counted here, so the next admission reseeds from the stored scans instead of a stale count.
 */
export async function resetScanLimitCounter(redis: Redis, linkId: string): Promise<void> {
  await redis.del(scanLimitKey(linkId));
}

type WithTake = Redis & { scanLimitTake(key: string, limit: number): Promise<number> };

export class ScanLimitGuard {
  private readonly lifetimeScans: LifetimeScans;
  private readonly seedWaitMs: number;
  private readonly redis: WithTake;
  /** Seeds under way, one per link, shared by every redirect waiting for it (each counts for at most seedWaitMs). */
  private readonly seeding = new Map<string, Promise<void>>();
  private readonly failedAt = new Map<string, number>();

  /** `seedWaitMs`: how long a redirect waits for its link's counter to be seeded (then it is let through). */
  constructor(
    redis: Redis,
    lifetimeScans: LifetimeScans,
    seedWaitMs: number,
  ) {
    this.lifetimeScans = lifetimeScans;
    this.seedWaitMs = seedWaitMs;
    if (!('scanLimitTake' in redis)) redis.defineCommand('scanLimitTake', { numberOfKeys: 1, lua: TAKE });
    this.redis = redis as WithTake;
  }

  /** True when one more scan of the link fits within its limit (and counts it); throws when it cannot be told. */
  async admit(link: CountedLink, limit: number): Promise<boolean> {
    const key = scanLimitKey(link.id);
    let result = await this.redis.scanLimitTake(key, limit);
    if (result === -1) {
      await this.seed(link, key);
      result = await this.redis.scanLimitTake(key, limit);
      // Reset again (its limit changed) since the seed: let the caller decide rather than loop.
      if (result === -1) throw new Error(`scan-limit counter of link ${link.id} was reset during its seed`);
    }
    return result === 1;
  }

  /**
   * True while the link has scans left, taking none: a HEAD is not a scan, but once the limit is
   * reached it is refused like a GET. Seeds a missing counter as admit does; throws when it cannot be told.
   */
  async hasRoom(link: CountedLink, limit: number): Promise<boolean> {
    const key = scanLimitKey(link.id);
    let count = await this.redis.get(key);
    if (count === null) {
      await this.seed(link, key);
      count = await this.redis.get(key);
      // Reset again since the seed (its limit changed): nothing counted yet.
      if (count === null) return true;
    }
    return Number(count) < limit;
  }

  private seed(link: CountedLink, key: string): Promise<void> {
    const running = this.seeding.get(link.id);
    if (running) return running;
    const failed = this.failedAt.get(link.id);
    if (failed !== undefined && Date.now() - failed < SEED_RETRY_MS) return Promise.reject(new Error(`scans of link ${link.id} could not be counted less than ${SEED_RETRY_MS} ms ago`));
    this.failedAt.delete(link.id);
    const seed = this.lifetimeScans
      .of(link, this.seedWaitMs)
      .then(async (scans) => {
        await this.redis.set(key, String(scans), 'NX');
      })
      .catch((err: unknown) => {
        // Only recent failures matter; a long outage over many links must not grow this without end.
        if (this.failedAt.size >= 10_000) this.failedAt.clear();
        this.failedAt.set(link.id, Date.now());
        throw err;
      })
      .finally(() => this.seeding.delete(link.id));
    this.seeding.set(link.id, seed);
    return seed;
  }
}
