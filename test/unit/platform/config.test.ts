import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/platform/config.ts';

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
});
