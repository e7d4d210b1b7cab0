// Admission for links with a scan limit, exact across ingress instances: each
// redirect of such a link takes one unit from a Redis counter of the link's
// admitted scans, and is refused once the count would pass the limit. The
// counter holds the link's lifetime scans; when Redis does not have it (first
// scan since Redis started), it is seeded once from the durable count kept by
// the scan-limit actor in Postgres. The actor remains the source of truth and
// closes the link in links.changelog; this guard only stops concurrent scans
// from overshooting while that news travels.
//
// How far over the limit a link can go: 0 while Redis is up. After a Redis
// restart the seed lags by the scans still in the pipeline (normally well under
// a second's worth). If Redis is unreachable, redirects are let through and
// the actor's exhaustion (within about a second) is the only bound.
import type { Pool } from '../../platform/postgres/pool.ts';
import type { Redis } from '../../platform/redis.ts';

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
 * counted here, so the next admission reseeds from the durable count instead of a stale one.
 */
export async function resetScanLimitCounter(redis: Redis, linkId: string): Promise<void> {
  await redis.del(scanLimitKey(linkId));
}

type WithTake = Redis & { scanLimitTake(key: string, limit: number): Promise<number> };

export class ScanLimitGuard {
  private readonly redis: WithTake;

  constructor(redis: Redis, private readonly pg: Pool) {
    if (!('scanLimitTake' in redis)) redis.defineCommand('scanLimitTake', { numberOfKeys: 1, lua: TAKE });
    this.redis = redis as WithTake;
  }

  /** True when one more scan of the link fits within its limit (and counts it). */
  async admit(linkId: string, limit: number): Promise<boolean> {
    const key = scanLimitKey(linkId);
    let result = await this.redis.scanLimitTake(key, limit);
    if (result === -1) {
      const { rows } = await this.pg.query<{ scans: string }>('SELECT scans FROM link_scan_counts WHERE link_id = $1', [linkId]);
      await this.redis.set(key, rows[0]?.scans ?? '0', 'NX');
      result = await this.redis.scanLimitTake(key, limit);
    }
    return result === 1;
  }
}
