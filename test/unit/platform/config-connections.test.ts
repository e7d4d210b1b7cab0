// The connection settings (TLS and authentication of Kafka, the registry, ClickHouse, Postgres,
// Redis) and settings given as files (`<NAME>_FILE`): what loadConfig takes and what it refuses.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/platform/config.ts';
import { loadServiceConfig } from '../../../src/service.ts';

const dir = mkdtempSync(join(tmpdir(), 'config-connections-'));
const file = (name: string, content: string): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const ca = file('ca.pem', '-----BEGIN CERTIFICATE-----\n');
const missing = join(dir, 'missing.pem');

/** The message loadConfig refuses env with. */
function refusal(env: Record<string, string>): string {
  try {
    loadServiceConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('the configuration was taken');
}

describe('settings given as files', () => {
  it('reads <NAME>_FILE, its trailing newline trimmed', () => {
    const config = loadServiceConfig({
      KAFKA_SASL_PASSWORD_FILE: file('kafka-password', 's3cret with spaces\n'),
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'linkmail',
      ADMIN_TOKEN_FILE: file('admin-token', 'an-admin-token-of-many-chars\r\n'),
      CLICK_ID_SECRET_FILE: file('click-id', 'a-click-id-secret-long-enough\n'),
      DATABASE_URL_FILE: file('database-url', 'postgres://app:pw@db.example.com:5432/linkmail\n'),
    });
    expect(config.KAFKA_SASL_PASSWORD).toBe('s3cret with spaces');
    expect(config.ADMIN_TOKEN).toBe('an-admin-token-of-many-chars');
    expect(config.CLICK_ID_SECRET).toBe('a-click-id-secret-long-enough');
    expect(config.DATABASE_URL).toBe('postgres://app:pw@db.example.com:5432/linkmail');
  });

  it('refuses a setting given both ways', () => {
    expect(refusal({ SECRETS_KEYS: 'k1:abc', SECRETS_KEYS_FILE: file('keys', 'k1:abc\n') })).toMatch(/SECRETS_KEYS and SECRETS_KEYS_FILE are both set/);
  });

  it('names a file it cannot read', () => {
    expect(refusal({ MAIL_LINK_SECRET_FILE: missing })).toContain(`MAIL_LINK_SECRET_FILE: cannot read ${missing} (ENOENT)`);
  });

  it('never prints a secret it refuses, and masks the password of a URL', () => {
    const message = refusal({ ADMIN_TOKEN: 'short secret', DATABASE_URL: 'mysql://app:hunter2@db/x' });
    expect(message).toContain('ADMIN_TOKEN=(hidden)');
    expect(message).toContain('DATABASE_URL="mysql://app:***@db/x"');
    expect(message).not.toMatch(/short secret|hunter2/);
  });
});

describe('Kafka connection settings', () => {
  it('takes TLS with a CA and a client certificate, and each SASL mechanism', () => {
    const cert = file('client.pem', 'cert');
    const key = file('client.key', 'key');
    const config = loadConfig({ KAFKA_SSL: 'on', KAFKA_SSL_CA_FILE: ca, KAFKA_SSL_CERT_FILE: cert, KAFKA_SSL_KEY_FILE: key });
    expect(config.KAFKA_SSL).toBe('on');
    for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512']) {
      expect(loadConfig({ KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' }).KAFKA_SASL_MECHANISM).toBe(mechanism);
    }
  });

  it('refuses a mechanism it does not know', () => {
    const message = refusal({ KAFKA_SASL_MECHANISM: 'gssapi', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' });
    expect(message).toContain('KAFKA_SASL_MECHANISM="gssapi"');
  });

  it('refuses a mechanism without its user, and a user without a mechanism', () => {
    expect(refusal({ KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u' })).toMatch(/KAFKA_SASL_MECHANISM is plain: set KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD/);
    expect(refusal({ KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' })).toMatch(/KAFKA_SASL_MECHANISM is not/);
  });

  it('refuses a CA file that is missing, or given with TLS off, and a certificate without its key', () => {
    expect(refusal({ KAFKA_SSL: 'on', KAFKA_SSL_CA_FILE: missing })).toContain(`KAFKA_SSL_CA_FILE: cannot read ${missing} (ENOENT)`);
    expect(refusal({ KAFKA_SSL_CA_FILE: ca })).toMatch(/KAFKA_SSL_CA_FILE is set but KAFKA_SSL is off/);
    expect(refusal({ KAFKA_SSL: 'on', KAFKA_SSL_CERT_FILE: ca })).toMatch(/KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together/);
    expect(refusal({ KAFKA_SSL: 'yes' })).toContain('KAFKA_SSL="yes"');
  });
});

describe('registry, ClickHouse and Redis connection settings', () => {
  it('takes basic authentication and CAs for https and rediss URLs', () => {
    const config = loadConfig({
      SCHEMA_REGISTRY_URL: 'https://registry.example.com', SCHEMA_REGISTRY_USERNAME: 'key', SCHEMA_REGISTRY_PASSWORD: 'secret', SCHEMA_REGISTRY_CA_FILE: ca,
      CLICKHOUSE_URL: 'https://ch.example.com:8443', CLICKHOUSE_CA_FILE: ca,
      REDIS_URL: 'rediss://app:secret@redis.example.com:6380/0', REDIS_CA_FILE: ca,
    });
    expect(config.SCHEMA_REGISTRY_USERNAME).toBe('key');
    expect(config.CLICKHOUSE_CA_FILE).toBe(ca);
    expect(config.REDIS_CA_FILE).toBe(ca);
  });

  it('refuses half of basic authentication, a CA for a plaintext URL, and a CA file that is missing', () => {
    expect(refusal({ SCHEMA_REGISTRY_USERNAME: 'key' })).toMatch(/SCHEMA_REGISTRY_USERNAME and SCHEMA_REGISTRY_PASSWORD go together/);
    expect(refusal({ SCHEMA_REGISTRY_CA_FILE: ca })).toMatch(/SCHEMA_REGISTRY_CA_FILE is set but SCHEMA_REGISTRY_URL is not https:\/\//);
    expect(refusal({ CLICKHOUSE_CA_FILE: ca })).toMatch(/CLICKHOUSE_CA_FILE is set but CLICKHOUSE_URL is not https:\/\//);
    expect(refusal({ REDIS_CA_FILE: ca })).toMatch(/REDIS_CA_FILE is set but REDIS_URL is not rediss:\/\//);
    expect(refusal({ CLICKHOUSE_URL: 'https://ch.example.com', CLICKHOUSE_CA_FILE: missing })).toContain(`CLICKHOUSE_CA_FILE: cannot read ${missing} (ENOENT)`);
  });
});

describe('Postgres connection settings', () => {
  it('takes sslmode=verify-full with sslrootcert, and folds DATABASE_CA_FILE into the URL', () => {
    const url = `postgres://app@db.example.com/linkmail?sslmode=verify-full&sslrootcert=${ca}`;
    expect(loadConfig({ DATABASE_URL: url }).DATABASE_URL).toBe(url);
    const folded = new URL(loadConfig({ DATABASE_URL: 'postgres://app@db.example.com/linkmail', DATABASE_CA_FILE: ca }).DATABASE_URL);
    expect(folded.searchParams.get('sslmode')).toBe('verify-full');
    expect(folded.searchParams.get('sslrootcert')).toBe(ca);
  });

  it('refuses the modes pg does not honour as written, a CA with TLS off, a missing CA, and two CAs', () => {
    expect(refusal({ DATABASE_URL: 'postgres://db/x?sslmode=require' })).toMatch(/sslmode=require is not taken: use sslmode=verify-full/);
    expect(refusal({ DATABASE_URL: 'postgres://db/x?sslmode=disable', DATABASE_CA_FILE: ca })).toMatch(/sslmode=disable with a CA/);
    expect(refusal({ DATABASE_URL: `postgres://db/x?sslmode=verify-full&sslrootcert=${missing}` })).toContain(`DATABASE_URL's sslrootcert: cannot read ${missing} (ENOENT)`);
    expect(refusal({ DATABASE_URL: `postgres://db/x?sslrootcert=${missing}`, DATABASE_CA_FILE: ca })).toMatch(/DATABASE_CA_FILE and DATABASE_URL's sslrootcert are both set/);
  });
});
