// The rules across the settings of the connections to Kafka, the registry, ClickHouse, Postgres
// and Redis (TLS and authentication) that a schema cannot say, checked at start-up so that a
// half-given setting is named there instead of failing at the first connection.
import { accessSync, constants } from 'node:fs';
import type { Config } from './config.ts';

type ConnectionSettings = Pick<Config,
  | 'KAFKA_SSL' | 'KAFKA_SSL_CA_FILE' | 'KAFKA_SSL_CERT_FILE' | 'KAFKA_SSL_KEY_FILE' | 'KAFKA_SASL_MECHANISM' | 'KAFKA_SASL_USERNAME' | 'KAFKA_SASL_PASSWORD'
  | 'SCHEMA_REGISTRY_URL' | 'SCHEMA_REGISTRY_USERNAME' | 'SCHEMA_REGISTRY_PASSWORD' | 'SCHEMA_REGISTRY_CA_FILE'
  | 'CLICKHOUSE_URL' | 'CLICKHOUSE_CA_FILE' | 'DATABASE_URL' | 'DATABASE_CA_FILE' | 'REDIS_URL' | 'REDIS_CA_FILE'>;

/**
 * The `sslmode`s taken: pg verifies the server's certificate and name for `require`, `prefer` and
 * `verify-ca` too (and warns that this will change), so they are refused rather than half-meant.
 */
const SSL_MODES = ['disable', 'verify-full'];

function unreadable(setting: string, file: string): string[] {
  if (!file) return [];
  try {
    accessSync(file, constants.R_OK);
    return [];
  } catch (err) {
    return [`${setting}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`];
  }
}

function kafkaProblems(c: ConnectionSettings): string[] {
  const problems: string[] = [];
  if (c.KAFKA_SSL === 'off') {
    for (const name of ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE'] as const) {
      if (c[name]) problems.push(`${name} is set but KAFKA_SSL is off: set KAFKA_SSL=on`);
    }
  }
  if (Boolean(c.KAFKA_SSL_CERT_FILE) !== Boolean(c.KAFKA_SSL_KEY_FILE)) problems.push('KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together: give both or neither');
  problems.push(...unreadable('KAFKA_SSL_CA_FILE', c.KAFKA_SSL_CA_FILE), ...unreadable('KAFKA_SSL_CERT_FILE', c.KAFKA_SSL_CERT_FILE), ...unreadable('KAFKA_SSL_KEY_FILE', c.KAFKA_SSL_KEY_FILE));
  if (c.KAFKA_SASL_MECHANISM) {
    if (!c.KAFKA_SASL_USERNAME || !c.KAFKA_SASL_PASSWORD) problems.push(`KAFKA_SASL_MECHANISM is ${c.KAFKA_SASL_MECHANISM}: set KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD too`);
  } else if (c.KAFKA_SASL_USERNAME || c.KAFKA_SASL_PASSWORD) {
    problems.push('KAFKA_SASL_USERNAME/KAFKA_SASL_PASSWORD are set but KAFKA_SASL_MECHANISM is not: set it to plain, scram-sha-256 or scram-sha-512');
  }
  return problems;
}

/** A CA file for a URL that is not TLS would be ignored: refused instead. */
function caNeedsTls(setting: string, file: string, urlSetting: string, url: string, scheme: string): string[] {
  if (!file) return [];
  if (!url.startsWith(`${scheme}://`)) return [`${setting} is set but ${urlSetting} is not ${scheme}://`];
  return unreadable(setting, file);
}

function postgresProblems(c: ConnectionSettings): string[] {
  let params: URLSearchParams;
  try {
    params = new URL(c.DATABASE_URL).searchParams;
  } catch {
    return ['DATABASE_URL is not a URL'];
  }
  const mode = params.get('sslmode');
  const problems: string[] = [];
  if (mode !== null && !SSL_MODES.includes(mode)) {
    problems.push(`DATABASE_URL: sslmode=${mode} is not taken: use sslmode=verify-full (TLS, the server's certificate and name checked) or sslmode=disable`);
  }
  if (mode === 'disable' && (params.has('sslrootcert') || c.DATABASE_CA_FILE)) problems.push('DATABASE_URL: sslmode=disable with a CA to trust: drop one of them');
  if (c.DATABASE_CA_FILE && params.get('sslrootcert') !== c.DATABASE_CA_FILE) problems.push("DATABASE_CA_FILE and DATABASE_URL's sslrootcert are both set: give one of them");
  for (const param of ['sslrootcert', 'sslcert', 'sslkey']) {
    const file = params.get(param);
    if (file) problems.push(...unreadable(`DATABASE_URL's ${param}`, file));
  }
  return problems;
}

export function connectionProblems(c: ConnectionSettings): string[] {
  const problems = [...kafkaProblems(c)];
  if (Boolean(c.SCHEMA_REGISTRY_USERNAME) !== Boolean(c.SCHEMA_REGISTRY_PASSWORD)) problems.push('SCHEMA_REGISTRY_USERNAME and SCHEMA_REGISTRY_PASSWORD go together: give both or neither');
  problems.push(...caNeedsTls('SCHEMA_REGISTRY_CA_FILE', c.SCHEMA_REGISTRY_CA_FILE, 'SCHEMA_REGISTRY_URL', c.SCHEMA_REGISTRY_URL, 'https'));
  problems.push(...caNeedsTls('CLICKHOUSE_CA_FILE', c.CLICKHOUSE_CA_FILE, 'CLICKHOUSE_URL', c.CLICKHOUSE_URL, 'https'));
  problems.push(...caNeedsTls('REDIS_CA_FILE', c.REDIS_CA_FILE, 'REDIS_URL', c.REDIS_URL, 'rediss'));
  problems.push(...postgresProblems(c));
  return problems;
}

/**
 * DATABASE_CA_FILE folded into DATABASE_URL as `sslrootcert` (with `sslmode=verify-full` unless a
 * mode is given), so that every Postgres client made from the URL (the pool, the migration runner,
 * the tests' own) trusts it alike. Both given is left for connectionProblems to refuse.
 */
export function withDatabaseCa<C extends Pick<Config, 'DATABASE_URL' | 'DATABASE_CA_FILE'>>(config: C): C {
  if (!config.DATABASE_CA_FILE) return config;
  let url: URL;
  try {
    url = new URL(config.DATABASE_URL);
  } catch {
    return config;
  }
  if (url.searchParams.has('sslrootcert')) return config;
  url.searchParams.set('sslrootcert', config.DATABASE_CA_FILE);
  if (!url.searchParams.has('sslmode')) url.searchParams.set('sslmode', 'verify-full');
  return { ...config, DATABASE_URL: url.toString() };
}
