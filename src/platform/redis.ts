// Redis: the shared store for synchronous limits that must hold across ingress instances.
import { readFileSync } from 'node:fs';
import { Redis, type RedisOptions } from 'ioredis';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';

export type { Redis };

export type RedisSettings = Pick<Config, 'REDIS_URL'> & Partial<Pick<Config, 'REDIS_CA_FILE'>>;

/**
 * The TLS options of a client of REDIS_URL: a rediss:// URL is TLS (ioredis trusts the system's
 * CAs), with REDIS_CA_FILE's CA instead when given. The URL carries the password or ACL user.
 */
export function redisTls(config: RedisSettings): Pick<RedisOptions, 'tls'> {
  return config.REDIS_CA_FILE ? { tls: { ca: readFileSync(config.REDIS_CA_FILE, 'utf8') } } : {};
}

export function createRedis(config: RedisSettings, log: Logger): Redis {
  const redis = new Redis(config.REDIS_URL, {
    ...redisTls(config),
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
