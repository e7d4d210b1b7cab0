// Open live streams per workspace, counted across every ingress in Redis: one sorted set per
// workspace whose members are the streams and whose scores are when each lease runs out. The
// ingress holding a stream renews its lease every LEASE_MS / 3, so the streams of a killed
// ingress stop counting within LEASE_MS. Redis away: the stream is let through (as the API limit
// is), and logged.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../platform/logger.ts';
import type { Redis } from '../../platform/redis.ts';

export const LEASE_MS = 15_000;

// KEYS[1] the workspace's set; ARGV: now, lease end, limit, member.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ${LEASE_MS * 2})
return 1`;

export class StreamSlots {
  private readonly redis: Redis;
  private readonly log: Logger;
  private readonly held = new Map<string, string>();
  private readonly timer: NodeJS.Timeout;

  constructor(redis: Redis, log: Logger) {
    this.redis = redis;
    this.log = log;
    this.timer = setInterval(() => void this.renew(), LEASE_MS / 3);
    this.timer.unref();
  }

  /** A slot of the workspace's `limit`, or undefined when every one is taken. Release it when the stream ends. */
  async acquire(workspaceId: string, limit: number): Promise<{ release: () => void } | undefined> {
    const key = `live-streams:${workspaceId}`;
    const member = randomUUID();
    const now = Date.now();
    try {
      const ok = await this.redis.eval(ACQUIRE, 1, key, now, now + LEASE_MS, limit, member);
      if (ok !== 1) return undefined;
    } catch (err) {
      this.log.warn({ err }, 'live stream slots: Redis cannot be reached; stream let through uncounted');
      return { release: () => {} };
    }
    this.held.set(member, key);
    return {
      release: () => {
        if (!this.held.delete(member)) return;
        this.redis.zrem(key, member).catch(() => {});
      },
    };
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const until = Date.now() + LEASE_MS;
    const pipeline = this.redis.pipeline();
    for (const [member, key] of this.held) pipeline.zadd(key, 'XX', until, member);
    await pipeline.exec().catch(() => {});
  }

  close(): void {
    clearInterval(this.timer);
  }
}
