// The secured local stack (STACK_SECURE=1, infra/local/secure.sh): its service.env lets each client
// in, over TLS and with the service's password, and each service refuses a plaintext or
// unauthenticated client. Plain clients (pg, ioredis, kafkajs, node:https), no code of ours.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Redis } from 'ioredis';
import { Kafka, logLevel, type SASLOptions } from 'kafkajs';
import { startSecureStack, type SecureStack } from '../../support/secure-stack.ts';

let stack: SecureStack;
let ca: Buffer;

beforeAll(async () => {
  stack = await startSecureStack();
  ca = readFileSync(stack.caFile);
}, 300_000);
afterAll(async () => {
  await stack?.release();
}, 120_000);

describe('the secured stack', () => {
  it('writes a service.env that names TLS and a password for every service', () => {
    const { env } = stack;
    expect(env).toMatchObject({ KAFKA_SSL: 'on', KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'service', CLICKHOUSE_USER: 'service', SCHEMA_REGISTRY_USERNAME: 'service' });
    for (const name of ['KAFKA_SSL_CA_FILE', 'SCHEMA_REGISTRY_CA_FILE', 'CLICKHOUSE_CA_FILE', 'REDIS_CA_FILE']) expect(env[name]).toBe(stack.caFile);
    for (const name of ['KAFKA_SASL_PASSWORD', 'SCHEMA_REGISTRY_PASSWORD', 'CLICKHOUSE_PASSWORD']) expect(env[name]).toMatch(/^[0-9a-f]{32}$/);
    expect(env.SCHEMA_REGISTRY_URL).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/apis\/ccompat\/v7$/);
    expect(env.CLICKHOUSE_URL).toMatch(/^https:\/\//);
    expect(env.DATABASE_URL).toMatch(/^postgres:\/\/service:[0-9a-f]{32}@127\.0\.0\.1:\d+\/linkmail\?sslmode=verify-full&sslrootcert=/);
    expect(env.REDIS_URL).toMatch(/^rediss:\/\/service:[0-9a-f]{32}@127\.0\.0\.1:\d+\/0$/);
  });

  describe('Postgres', () => {
    it('lets the service in over verify-full TLS with its password', async () => {
      expect(await pgQuery(setting('DATABASE_URL'), 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')).toEqual([{ ssl: true }]);
    });
    it('refuses sslmode=disable and a wrong password', async () => {
      await expect(pgQuery(setting('DATABASE_URL').replace(/\?.*$/, '?sslmode=disable'), 'SELECT 1')).rejects.toThrow(/no pg_hba.conf entry .* no encryption/);
      await expect(pgQuery(setting('DATABASE_URL').replace(/:[0-9a-f]{32}@/, ':wrong@'), 'SELECT 1')).rejects.toThrow(/password authentication failed/);
    });
  });

  describe('Redis', () => {
    it('lets the service in over TLS as its ACL user', async () => {
      expect(await redisPing(setting('REDIS_URL'), { ca })).toBe('PONG');
    });
    it('refuses a plaintext client, and a TLS client without the password', async () => {
      await expect(redisPing(setting('REDIS_URL').replace('rediss://', 'redis://'))).rejects.toThrow();
      await expect(redisPing(setting('REDIS_URL').replace(/service:[0-9a-f]{32}@/, ''), { ca })).rejects.toThrow(/NOAUTH/);
      // (AUTH after connecting: ioredis would end a connection whose AUTH at connect failed, with the reason unsaid.)
      await expect(redisPing(setting('REDIS_URL').replace(/service:[0-9a-f]{32}@/, ''), { ca }, ['service', 'wrong'])).rejects.toThrow(/WRONGPASS/);
    });
  });

  describe('ClickHouse', () => {
    const query = `/?query=${encodeURIComponent('SELECT 1')}`;
    it('answers the service over HTTPS with its password', async () => {
      const { status, body } = await request(setting('CLICKHOUSE_URL') + query, basic(setting('CLICKHOUSE_USER'), setting('CLICKHOUSE_PASSWORD')));
      expect([status, body.trim()]).toEqual([200, '1']);
    });
    it('refuses plain HTTP, no credentials and a wrong password', async () => {
      await expect(request(setting('CLICKHOUSE_URL').replace('https:', 'http:') + query, basic(setting('CLICKHOUSE_USER'), setting('CLICKHOUSE_PASSWORD')))).rejects.toThrow();
      expect((await request(setting('CLICKHOUSE_URL') + query, {})).body).toMatch(/Unknown user default/);
      expect((await request(setting('CLICKHOUSE_URL') + query, basic(setting('CLICKHOUSE_USER'), 'wrong'))).body).toMatch(/Wrong password/);
    });
  });

  describe('the schema registry', () => {
    const subjects = () => `${setting('SCHEMA_REGISTRY_URL')}/subjects`;
    it('answers the service over HTTPS with basic auth', async () => {
      expect((await request(subjects(), basic(setting('SCHEMA_REGISTRY_USERNAME'), setting('SCHEMA_REGISTRY_PASSWORD')))).status).toBe(200);
    });
    it('refuses no credentials, a wrong password and plain HTTP', async () => {
      expect((await request(subjects(), {})).status).toBe(401);
      expect((await request(subjects(), basic(setting('SCHEMA_REGISTRY_USERNAME'), 'wrong'))).status).toBe(401);
      expect((await request(subjects().replace('https:', 'http:'), basic(setting('SCHEMA_REGISTRY_USERNAME'), setting('SCHEMA_REGISTRY_PASSWORD')))).status).toBe(400);
    });
  });

  describe('Kafka', () => {
    // A new object each time: kafkajs keeps its authenticator (and so the password) in the sasl object it is given.
    const sasl = (password = setting('KAFKA_SASL_PASSWORD')): SASLOptions => ({ mechanism: 'scram-sha-512', username: setting('KAFKA_SASL_USERNAME'), password });
    it('lets the service in over SASL_SSL', async () => {
      await expect(listTopics({ ssl: { ca: [ca] }, sasl: sasl() })).resolves.toBeInstanceOf(Array);
    });
    it('refuses a plaintext client, a TLS client without SASL and a wrong password', async () => {
      await expect(listTopics({})).rejects.toThrow();
      await expect(listTopics({ ssl: { ca: [ca] } })).rejects.toThrow();
      await expect(listTopics({ ssl: { ca: [ca] }, sasl: sasl('wrong') })).rejects.toThrow(/invalid credentials/);
    });
  });
});

/** A setting of the stack's service.env. */
function setting(name: string): string {
  const value = stack.env[name];
  if (value === undefined) throw new Error(`service.env has no ${name}`);
  return value;
}

async function pgQuery(connectionString: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.query(sql)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function redisPing(url: string, tls?: { ca: Buffer }, auth?: [user: string, password: string]): Promise<string> {
  // (No ready check: it would end the connection at NOAUTH before the PING does.)
  const redis = new Redis(url, { tls, lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 5000 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    if (auth) await redis.auth(...auth);
    return await redis.ping();
  } finally {
    redis.disconnect();
  }
}

function basic(user: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}

function request(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const get = url.startsWith('https:') ? https.get : http.get;
  return new Promise((resolve, reject) => {
    const req = get(url, { ca, headers, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within 10 s`)));
    req.on('error', reject);
  });
}

async function listTopics(options: { ssl?: { ca: Buffer[] }; sasl?: SASLOptions }): Promise<string[]> {
  const kafka = new Kafka({
    brokers: setting('KAFKA_BROKERS').split(','),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 5000,
    requestTimeout: 5000,
    retry: { retries: 0 },
    ...options,
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    return await admin.listTopics();
  } finally {
    await admin.disconnect();
  }
}
