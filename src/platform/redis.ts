// Redis: the shared store for synchronous limits that must hold across ingress instances.
import { Redis } from 'ioredis';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';

export type { Redis };

export function createRedis(config: Pick<Config, 'REDIS_URL'>, log: Logger): Redis {
  const redis = new Redis(config.REDIS_URL, {
    // Fail a command fast when Redis is away instead of queueing it behind a reconnect.
    maxRetriesPerRequest: 1,
    connectTimeout: 3000,
    lazyConnect: true,
    // Commands issued in the same tick go out in one write (the redirect limiter calls Redis per request).
    enableAutoPipelining: true,
  });
  // ioredis emits an error for every failed reconnect, and prints each one itself when nobody
  // listens: an outage is logged once when it starts and once when it ends.
  let away = false;
  redis.on('error', (err) => {
    if (away) return;
    away = true;
    log.warn({ err }, 'Redis cannot be reached; reconnecting');
  });
  redis.on('ready', () => {
    if (!away) return;
    away = false;
    log.info('Redis reached again');
  });
  return redis;
}
