import { describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { ConfigError, loadConfig } from '../../../src/platform/config.ts';
import { loadServiceConfig } from '../../../src/service.ts';
import { clickhouseUrls } from '../../../src/platform/clickhouse/client.ts';

describe('configuration', () => {
  it('has defaults that match the local stack', () => {
    const config = loadConfig({});
    expect(config.HTTP_PORT).toBe(3000);
    expect(config.KAFKA_BROKERS).toBe('127.0.0.1:9092');
    expect(config.SCHEMA_REGISTRY_URL).toBe('http://127.0.0.1:8081/apis/ccompat/v7');
    expect(config.TOPIC_PREFIX).toBe('');
  });

  it('converts numbers and treats blank as default', () => {
    const config = loadConfig({ HTTP_PORT: '8080', ACTOR_MAX_ATTEMPTS: ' ', LOG_LEVEL: 'debug' });
    expect(config.HTTP_PORT).toBe(8080);
    expect(config.ACTOR_MAX_ATTEMPTS).toBe(5);
    expect(config.LOG_LEVEL).toBe('debug');
  });

  it('names every bad variable', () => {
    try {
      loadConfig({ HTTP_PORT: 'eighty', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as Error).message;
      expect(message).toContain('HTTP_PORT');
      expect(message).toContain('DATABASE_URL');
      expect(message).toContain('LOG_LEVEL');
    }
  });

  it('takes one ClickHouse server or several comma-separated (replicas), each an http(s) URL, and replicated tables on or off', () => {
    expect(loadConfig({}).CLICKHOUSE_REPLICATED).toBe('off');
    const replicas = loadConfig({ CLICKHOUSE_URL: 'http://127.0.0.1:8210, http://127.0.0.1:8220,http://127.0.0.1:8230', CLICKHOUSE_REPLICATED: 'on' });
    expect(clickhouseUrls(replicas)).toEqual(['http://127.0.0.1:8210', 'http://127.0.0.1:8220', 'http://127.0.0.1:8230']);
    expect(replicas.CLICKHOUSE_REPLICATED).toBe('on');
    expect(clickhouseUrls(loadConfig({}))).toEqual(['http://127.0.0.1:8123']);
    for (const bad of ['http://a:8123,', 'http://a:8123,,http://b:8123', 'http://a:8123;http://b:8123', 'http://a:8123,b:8123']) {
      expect(() => loadConfig({ CLICKHOUSE_URL: bad }), bad).toThrow(/CLICKHOUSE_URL/);
    }
    expect(() => loadConfig({ CLICKHOUSE_REPLICATED: 'yes' })).toThrow(/CLICKHOUSE_REPLICATED.*expected one of on, off/);
    expect(() => loadConfig({ CLICKHOUSE_URL: 'http://a:8123,http://b:8123' })).toThrow(/CLICKHOUSE_URL names several servers: they must be replicas of one shard, with CLICKHOUSE_REPLICATED=on/);
  });
});

describe('configuration of the platform and its products', () => {
  const product = { product: 'probe', schema: Type.Object({ PROBE_LIMIT: Type.Integer({ minimum: 1, default: 5 }) }), check: (c: { PROBE_LIMIT: number; NODE_ENV: string }) => (c.NODE_ENV === 'production' && c.PROBE_LIMIT === 5 ? ['PROBE_LIMIT must be set in production'] : []) };

  it('reads a product\'s settings with the same conversion and defaults, and names its bad variables next to the platform\'s', () => {
    expect(loadConfig({ PROBE_LIMIT: '7' }, [product]).PROBE_LIMIT).toBe(7);
    expect(loadConfig({}, [product]).PROBE_LIMIT).toBe(5);
    expect(() => loadConfig({ PROBE_LIMIT: '0', HTTP_PORT: 'eighty' }, [product])).toThrow(/PROBE_LIMIT[\s\S]*HTTP_PORT|HTTP_PORT[\s\S]*PROBE_LIMIT/);
    expect(() => loadConfig({ NODE_ENV: 'production' }, [product])).toThrow(ConfigError);
  });

  it('refuses a setting two declare', () => {
    const clash = { product: 'clash', schema: Type.Object({ HTTP_PORT: Type.Integer({ default: 1 }) }) };
    expect(() => loadConfig({}, [clash])).toThrow(/HTTP_PORT of clash is already declared/);
  });

  it('combines the link product\'s settings into the service configuration, and names a bad one', () => {
    expect(loadServiceConfig({}).REDIRECTS_PER_MINUTE_PER_IP).toBe(60);
    expect(() => loadServiceConfig({ CLICK_ID_SECRET: 'short' })).toThrow(/CLICK_ID_SECRET/);
    expect(() => loadServiceConfig({ NODE_ENV: 'production' })).toThrow(/CLICK_ID_SECRET must be set in production/);
  });
});
