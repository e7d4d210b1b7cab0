// The secured local stack (STACK_SECURE=1, infra/local/secure.sh), started once for this file (two
// JVMs: a minute or more): its service.env lets each client in, over TLS and with the service's
// password, and each service refuses a plaintext or unauthenticated client (plain clients: pg,
// ioredis, kafkajs, node:https, no code of ours); and the service itself works on it with those
// settings alone, every connection on TLS (ingresses, worker processes, MCP), and refuses to start
// when a setting is wrong.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Redis } from 'ioredis';
import { Kafka, logLevel, type SASLOptions } from 'kafkajs';
import { startSecureStack, type SecureStack } from '../../support/secure-stack.ts';
import { eventually, testConfig, testEnv } from '../../support/env.ts';
import { call, client, INGRESS_ENV, startIngress, type TestIngress } from '../../support/ingress.ts';
import { startTs, startWorkerKinds, stopChild, type Child } from '../../support/processes.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { scan } from '../../support/links/scans.ts';
import { makeTestCa, type TestCa } from '../../support/links/test-ca.ts';
import { startReceiver, type Receiver } from '../../support/links/webhook-receiver.ts';
import { organizationWithSdk } from '../../support/mail/webhooks.ts';
import { broadcastHelpers } from '../../support/mail/broadcasts.ts';
import { callOk, connectMcp } from '../../support/mcp.ts';
import { createLogger } from '../../../src/platform/logger.ts';
import { migrateAll } from '../../../src/platform/migrations.ts';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import { loadServiceConfig } from '../../../src/service.ts';
import { within } from '../../../src/platform/within.ts';

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

describe('the service on the secured stack', () => {
  let one: TestIngress;
  let two: TestIngress;
  let workers: Child;
  let hooksCa: TestCa;
  let hook: Receiver;

  /**
   * The service's settings: the run's (its database names, this file's topic prefix, its secrets key)
   * with every connection setting of the stack's service.env, the database name kept the run's.
   */
  function secured(overrides: Record<string, string> = {}): Record<string, string> {
    const url = new URL(setting('DATABASE_URL'));
    url.pathname = new URL(testConfig().DATABASE_URL).pathname;
    return { ...stack.env, DATABASE_URL: url.toString(), ...overrides };
  }

  beforeAll(async () => {
    const config = loadServiceConfig({ ...testEnv(), ...secured() });
    await migrateAll(config, createLogger(config, 'test-secure-migrate'));
    hooksCa = makeTestCa();
    hook = await startReceiver(hooksCa);
    [one, two, workers] = await Promise.all([
      startIngress(secured({ API_RATE_LIMIT_PER_MINUTE: '100000', API_RATE_LIMIT_PER_SEC: '1000', WEBHOOK_ALLOW_HOSTS: '127.0.0.1' })),
      startIngress(secured()),
      // Every worker kind these tests need, in one process (the machine's two cores also run the stack).
      startWorkerKinds(['links-scan-sink', 'mail-sender', 'mail-broadcasts', 'mail-webhooks'], secured({
        WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_CA_FILE: hooksCa.caFile, WEBHOOK_POLL_MS: '50', MAIL_FANOUT_BATCH: '2',
      })),
    ]);
  }, 180_000);
  afterAll(async () => {
    await stopChild(workers);
    await two?.close();
    await one?.close();
    await hook?.close();
  }, 60_000);

  it('records a redirect in ClickHouse (ingress → Kafka and the registry → the scan sink worker)', async () => {
    const { key } = await workspaceWithKey(one.url);
    const link = await call(one.url, 'POST', '/api/v1/links', { key, body: { destination: 'https://example.com/tls' } });
    expect(link.status, JSON.stringify(link.body)).toBe(201);
    const res = await scan(one.url, link.body.shortId);
    expect([res.status, res.location?.startsWith('https://example.com/tls')]).toEqual([302, true]);
    await eventually(async () => {
      const [row] = await one.platform.clickhouse.rows<{ n: string }>(sql`SELECT count() AS n FROM scans WHERE short_id = ${link.body.shortId}`);
      return Number(row!.n) === 1;
    });
  });

  it("sends a link's change to a second ingress's cache (links.changelog)", async () => {
    const { key } = await workspaceWithKey(one.url);
    const api = client(one.url, key);
    const link = (await api.post('/api/v1/links', { destination: 'https://example.com/before' })).body;
    // The second ingress caches the link as it was.
    expect((await scan(two.url, link.shortId)).location).toMatch(/^https:\/\/example\.com\/before/);
    expect((await api.patch(`/api/v1/links/${link.id}`, { destination: 'https://example.com/after' })).status).toBe(200);
    await eventually(async () => (await scan(two.url, link.shortId)).location?.startsWith('https://example.com/after') ?? false);
  });

  it('hands an email to the SMTP sink and delivers its webhook', async () => {
    const org = await organizationWithSdk(one.url);
    const endpoint = await call(one.url, 'POST', '/webhooks', { key: org.key, body: { endpoint: hook.url, events: ['email.sent'] } });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    const to = `reader-${randomBytes(4).toString('hex')}@example.net`;
    const sent = await call(one.url, 'POST', '/emails', { key: org.key, body: { from: org.from, to, subject: 'Over TLS', text: 'Hello' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const messages = await eventually(async () => {
      const found = await sinkMessages(to);
      return found.length > 0 ? found : undefined;
    });
    expect(messages).toMatchObject([{ subject: 'Over TLS' }]);
    const delivered = await eventually(async () => hook.received.map((r) => JSON.parse(r.body)).find((b) => b.data?.email_id === sent.body.id));
    expect(delivered).toMatchObject({ type: 'email.sent', data: { email_id: sent.body.id, to: [to] } });
  });

  it('fans a broadcast out to its contacts, and sends them', async () => {
    const { organization, contacts, create, api, until } = broadcastHelpers(() => one.url);
    const org = await organization();
    const prefix = `tls-${randomBytes(4).toString('hex')}`;
    await contacts(org, 3, prefix);
    const draft = await create(org);
    expect((await api(org, 'POST', `/api/v1/broadcasts/${draft.id}/send`)).status).toBe(200);
    const sent = await until(org, draft.id, 'sent');
    expect(sent.stats).toEqual({ eligible: 3, suppressed: 0, queued: 3, skipped: 0 });
    for (let i = 0; i < 3; i++) {
      const messages = await eventually(async () => {
        const found = await sinkMessages(`${prefix}-${i}@example.net`);
        return found.length > 0 ? found : undefined;
      });
      expect(messages).toMatchObject([{ subject: `Hello P${i}` }]);
    }
  });

  it('answers MCP calls: a link tool and a mail tool', async () => {
    const { key } = await workspaceWithKey(one.url);
    const links = await connectMcp(one.url, key);
    try {
      const res = await links.client.callTool({ name: 'create_link', arguments: { destination: 'https://example.com/mcp' } });
      expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
      const { link } = res.structuredContent as { link: { shortId: string } };
      expect((await scan(two.url, link.shortId)).location).toMatch(/^https:\/\/example\.com\/mcp/);
    } finally {
      await links.close();
    }
    const org = await organizationWithSdk(one.url);
    const mail = await connectMcp(one.url, org.key);
    try {
      const email = await callOk(mail, 'send_email', { from: org.from, to: 'mcp@example.net', subject: 'From MCP', text: 'Hi' });
      expect((await callOk(mail, 'get_email', { id: email.id })).id).toBe(email.id);
    } finally {
      await mail.close();
    }
  });

  describe('refuses to start, within 30 s, naming the service and never the secret', () => {
    /** Starts an ingress process with these settings; its exit code and output once it stopped, failing if it runs on past 30 s. */
    async function refusedStart(overrides: Record<string, string>) {
      const started = Date.now();
      const child = startTs('src/main.ts', [], { ...INGRESS_ENV, ...secured(overrides), HTTP_PORT: '0', LOG_LEVEL: 'info' });
      try {
        const { code } = await within(child.exited, 30_000);
        return { code, ms: Date.now() - started, output: child.output() };
      } catch {
        await stopChild(child, 'SIGKILL');
        throw new Error(`the ingress did not stop within 30 s of its start; its output:\n${child.output()}`);
      }
    }

    it('Kafka with a wrong SASL password', async () => {
      // A process of its own builds its own kafkajs sasl object (kafkajs keeps the authenticator, and so the password, in it).
      const wrong = randomBytes(16).toString('hex');
      const { code, ms, output } = await refusedStart({ KAFKA_SASL_PASSWORD: wrong });
      expect(code, output).toBe(2);
      expect(ms).toBeLessThan(30_000);
      expect(output).toMatch(/cannot start: kafka: authentication failed \(SASL SCRAM-SHA-512 as user 'service' over TLS\)/);
      expect(output).not.toContain(wrong);
      expect(output).not.toContain(setting('KAFKA_SASL_PASSWORD'));
    }, 45_000);

    it('Kafka without TLS (KAFKA_SSL=off against the SASL_SSL listener)', async () => {
      const { code, ms, output } = await refusedStart({ KAFKA_SSL: 'off', KAFKA_SSL_CA_FILE: '' });
      expect(code, output).toBe(2);
      expect(ms).toBeLessThan(30_000);
      expect(output).toMatch(/cannot start: kafka: the broker's listener speaks TLS and KAFKA_SSL is off: set KAFKA_SSL=on/);
      expect(output).not.toMatch(/^cannot start: .*(postgres|clickhouse|redis|schema registry):/m);
      expect(output).not.toContain(setting('KAFKA_SASL_PASSWORD'));
    }, 45_000);

    it('Postgres, ClickHouse, Redis and the registry with wrong passwords, one line each', async () => {
      const wrong = (name: string) => `${name}-${randomBytes(12).toString('hex')}`;
      const secrets = { postgres: wrong('pg'), redis: wrong('redis'), clickhouse: wrong('ch'), registry: wrong('registry') };
      const { code, ms, output } = await refusedStart({
        DATABASE_URL: secured().DATABASE_URL!.replace(/:[0-9a-f]{32}@/, `:${secrets.postgres}@`),
        REDIS_URL: setting('REDIS_URL').replace(/:[0-9a-f]{32}@/, `:${secrets.redis}@`),
        CLICKHOUSE_PASSWORD: secrets.clickhouse,
        SCHEMA_REGISTRY_PASSWORD: secrets.registry,
      });
      expect(code, output).toBe(2);
      expect(ms).toBeLessThan(30_000);
      const line = output.split('\n').find((l) => l.startsWith('cannot start: ')) ?? '';
      expect(line.replace('cannot start: ', '').split('; ').sort(), output).toEqual([
        "clickhouse: authentication failed (as user 'service')",
        "postgres: authentication failed (password of user 'service')",
        "redis: authentication failed (as user 'service')",
        "schema registry: authentication failed (HTTP 401, basic auth as user 'service')",
      ]);
      for (const secret of [...Object.values(secrets), setting('CLICKHOUSE_PASSWORD'), setting('SCHEMA_REGISTRY_PASSWORD'), setting('KAFKA_SASL_PASSWORD')]) expect(output).not.toContain(secret);
    }, 45_000);
  });
});

/** The messages the stack's SMTP sink holds for this address. */
async function sinkMessages(to: string): Promise<{ subject: string }[]> {
  const res = await fetch(`${stack.smtpSinkUrl}/messages?to=${encodeURIComponent(to)}`);
  return (await res.json()) as { subject: string }[];
}
