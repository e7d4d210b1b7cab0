// The connection settings through real connections, with no secured stack: TLS proxies of this
// file's own (test/support/tls-proxies.ts) in front of the local Postgres, ClickHouse, Redis and
// registry, trusted through the *_CA_FILE settings; and a process whose settings the services
// refuse stops at once, naming each service and the cause, never a secret.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseUrls, createClickHouse } from '../../../src/platform/clickhouse/client.ts';
import { createLogger } from '../../../src/platform/logger.ts';
import { migrateAll } from '../../../src/platform/migrations.ts';
import { runChecks } from '../../../src/platform/health.ts';
import { startPlatform } from '../../../src/platform/platform.ts';
import { createPool } from '../../../src/platform/postgres/pool.ts';
import { createRedis } from '../../../src/platform/redis.ts';
import { checkConnections, StartUpError } from '../../../src/platform/start-up-checks.ts';
import { deadLettersTopic } from '../../../src/platform/actors/dead-letters-topic.ts';
import { testConfig } from '../../support/env.ts';
import { ADMIN_TOKEN, call, startIngress } from '../../support/ingress.ts';
import { makeTestCa, type TestCa } from '../../support/links/test-ca.ts';
import { childPort, startTs } from '../../support/processes.ts';
import { postgresTlsProxy, registryTlsProxy, tlsProxy, type Proxy } from '../../support/tls-proxies.ts';

const dir = mkdtempSync(join(tmpdir(), 'connection-settings-'));
const file = (name: string, content: string): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

let ca: TestCa;
let postgres: Proxy;
let clickhouse: Proxy;
let redis: Proxy;
let registry: Proxy;
/** The run's settings with every service but Kafka reached over TLS through the proxies, their CA trusted. */
let secured: Record<string, string>;

beforeAll(async () => {
  ca = makeTestCa();
  const plain = testConfig();
  const pgUrl = new URL(plain.DATABASE_URL);
  const registryUrl = new URL(plain.SCHEMA_REGISTRY_URL);
  [postgres, clickhouse, redis, registry] = await Promise.all([
    postgresTlsProxy(Number(pgUrl.port || 5432), ca),
    tlsProxy(Number(new URL(clickhouseUrls(plain)[0]!).port), ca), // (the first of replicas)
    tlsProxy(Number(new URL(plain.REDIS_URL).port), ca),
    registryTlsProxy(registryUrl, ca, 'registry-user', 'registry-password'),
  ]);
  pgUrl.port = String(postgres.port);
  pgUrl.searchParams.set('sslmode', 'verify-full');
  secured = {
    DATABASE_URL: pgUrl.toString(),
    DATABASE_CA_FILE: ca.caFile,
    CLICKHOUSE_URL: `https://127.0.0.1:${clickhouse.port}`,
    CLICKHOUSE_CA_FILE: ca.caFile,
    REDIS_URL: `rediss://127.0.0.1:${redis.port}/0`,
    REDIS_CA_FILE: ca.caFile,
    SCHEMA_REGISTRY_URL: `https://127.0.0.1:${registry.port}${registryUrl.pathname}`,
    SCHEMA_REGISTRY_USERNAME: 'registry-user',
    SCHEMA_REGISTRY_CA_FILE: ca.caFile,
    SCHEMA_REGISTRY_PASSWORD_FILE: file('registry-password', 'registry-password\n'),
  };
});

afterAll(async () => {
  await Promise.all([postgres, clickhouse, redis, registry].map((p) => p?.close()));
});

/** The message checkConnections refuses these settings with. */
async function refusal(overrides: Record<string, string>): Promise<string> {
  const err = await checkConnections(testConfig(overrides)).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(StartUpError);
  return (err as Error).message;
}

describe('connections over TLS, with the CA of the settings', () => {
  it('serves a platform whose Postgres (pool and migrations), ClickHouse, Redis and registry are all TLS', async () => {
    const config = testConfig(secured);
    expect(new URL(config.DATABASE_URL).searchParams.get('sslrootcert')).toBe(ca.caFile);
    await migrateAll(config, createLogger(config, 'test'));
    // Starting registers the topic's schema through the registry's basic auth; /readyz's checks reach each store.
    const platform = await startPlatform(config, { name: 'test', topics: [deadLettersTopic], migrate: false });
    try {
      expect((await platform.pg.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      const results = await runChecks(platform.checks, 10_000);
      expect(results.filter((r) => !r.ok)).toEqual([]);
    } finally {
      await platform.shutdown.run('test done');
    }
  });

  it('refuses each server whose certificate is not trusted, naming the service', async () => {
    const untrusted = { ...secured, DATABASE_CA_FILE: '', CLICKHOUSE_CA_FILE: '', REDIS_CA_FILE: '' };
    const message = await refusal(untrusted);
    expect(message).toMatch(/^postgres: server certificate not trusted \(.+\)$/m);
    expect(message).toMatch(/^clickhouse: server certificate not trusted \(.+\)$/m);
    expect(message).toMatch(/^redis: server certificate not trusted \(.+\)$/m);
  });

  it('refuses a wrong password, never printing it', async () => {
    const message = await refusal({
      ...secured,
      REDIS_URL: `rediss://bob:redis-wrong-password@127.0.0.1:${redis.port}/0`,
      SCHEMA_REGISTRY_PASSWORD_FILE: file('wrong-registry-password', 'registry-wrong-password\n'),
      CLICKHOUSE_PASSWORD: 'clickhouse-wrong-password',
    });
    expect(message).toContain("redis: authentication failed (as user 'bob')");
    expect(message).toContain("schema registry: authentication failed (HTTP 401, basic auth as user 'registry-user')");
    expect(message).toContain("clickhouse: authentication failed (as user 'default')");
    expect(message).not.toMatch(/wrong-password/);
  });

  it('reaches Redis and ClickHouse through the clients the processes use', async () => {
    const config = testConfig(secured);
    const client = createRedis(config, createLogger(config, 'test'));
    await client.connect();
    expect(await client.ping()).toBe('PONG');
    await client.quit();
    const ch = createClickHouse(config);
    expect(await (await ch.client.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow' })).json()).toEqual([{ one: 1 }]);
    await ch.close();
  });
});

describe('Postgres with sslmode=disable, and secrets as files', () => {
  it('runs the pool and the migrations on a URL with sslmode=disable', async () => {
    const url = new URL(testConfig().DATABASE_URL);
    url.searchParams.set('sslmode', 'disable');
    const config = testConfig({ DATABASE_URL: url.toString() });
    await migrateAll(config, createLogger(config, 'test'));
    const pool = createPool(config);
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await pool.end();
  });

  it('takes the admin token and the database URL from files, end to end', async () => {
    const url = new URL(testConfig().DATABASE_URL);
    url.searchParams.set('sslmode', 'disable');
    const ingress = await startIngress({
      ADMIN_TOKEN: '',
      ADMIN_TOKEN_FILE: file('admin-token', `${ADMIN_TOKEN}-from-a-file\n`),
      DATABASE_URL: '',
      DATABASE_URL_FILE: file('database-url', `${url}\n`),
    });
    try {
      const made = await call(ingress.url, 'POST', '/admin/v1/workspaces', { headers: { authorization: `Bearer ${ADMIN_TOKEN}-from-a-file` }, body: { name: 'from files', plan: 'free' } });
      expect(made.status).toBe(201);
      const refused = await call(ingress.url, 'POST', '/admin/v1/workspaces', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: { name: 'env token', plan: 'free' } });
      expect(refused.status).toBe(401);
    } finally {
      await ingress.close();
    }
  });
});

describe('a process whose settings the services refuse', () => {
  it('stops within 30 s with one line per service and cause, and no secret', async () => {
    const plain = testConfig();
    const pgUrl = new URL(plain.DATABASE_URL);
    pgUrl.searchParams.set('sslmode', 'verify-full');
    const started = Date.now();
    const child = startTs('src/main.ts', [], {
      HTTP_PORT: childPort(),
      DATABASE_URL: pgUrl.toString(),
      CLICKHOUSE_PASSWORD_FILE: file('clickhouse-password', 'clickhouse-secret-password\n'),
      REDIS_URL: 'redis://bob:redis-secret-password@127.0.0.1:6379/0',
      KAFKA_SSL: 'on',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'linkmail',
      KAFKA_SASL_PASSWORD: 'kafka-secret-password',
      SCHEMA_REGISTRY_URL: plain.SCHEMA_REGISTRY_URL.replace(/^http:/, 'https:'),
    });
    const { code } = await child.exited;
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(code).toBe(2);
    const output = child.output();
    expect(output).toContain('postgres: TLS asked (sslmode=verify-full) but the server does not offer it');
    expect(output).toContain("clickhouse: authentication failed (as user 'default')");
    expect(output).toContain("redis: authentication failed (as user 'bob')");
    expect(output).toMatch(/kafka: TLS asked but the server (answered plaintext|closed the connection during the handshake)/);
    expect(output).toContain('schema registry: TLS asked but the server answered plaintext');
    expect(output).not.toMatch(/secret-password/);
  });
});
