// Redis: the shared store for synchronous limits that must hold across ingress instances.
import { Redis } from 'ioredis';
import type { Config } from './config.ts';

export type { Redis };

export function createRedis(config: Pick<Config, 'REDIS_URL'>): Redis {
  return new Redis(config.REDIS_URL, {
    // Fail a command fast when Redis is away instead of queueing it behind a reconnect.
    maxRetriesPerRequest: 1,
    connectTimeout: 3000,
    lazyConnect: true,
    // Commands issued in the same tick go out in one write (the redirect limiter calls Redis per request).
    enableAutoPipelining: true,
  });
}
