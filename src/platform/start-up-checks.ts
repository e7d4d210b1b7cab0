// The first connection to each service, made at start-up before the clients that retry: a refusal
// that settings cause (a wrong password, a certificate not trusted, TLS asked of a plaintext
// server) stops the process at once with a message naming the service and the cause, instead of
// a retry loop that looks like an outage. A service that is merely away is left to those clients.
// No message holds a secret: the servers' own messages name users, never passwords.
import { Kafka, logLevel } from 'kafkajs';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createClickHouse } from './clickhouse/client.ts';
import { sql } from './clickhouse/literal.ts';
import type { Config } from './config.ts';
import { messageOf, tlsRefusal } from './connection-refusal.ts';
import { createLogger } from './logger.ts';
import { kafkaIdentity, kafkaSecurity } from './kafka/security.ts';
import { redisTls } from './redis.ts';
import { registryConnection, registryGet } from './registry/registry-connection.ts';
import { speaksTls, tlsHandshakeRefusal } from './tls-handshake.ts';
import { within } from './within.ts';

export class StartUpError extends Error {
  override name = 'StartUpError';
}

/** How long one service's check may take: all run at once, so start-up stops within it. */
const CHECK_MS = 15_000;

type Refusal = string | undefined;

/** The clients' own logs of a failed check: the check's message says it all. */
const SILENT = createLogger({ LOG_LEVEL: 'silent' });

async function checkPostgres(c: Config): Promise<Refusal> {
  const url = new URL(c.DATABASE_URL);
  const user = decodeURIComponent(url.username) || 'the default user';
  const mode = url.searchParams.get('sslmode');
  const client = new pg.Client({ connectionString: c.DATABASE_URL, connectionTimeoutMillis: CHECK_MS });
  client.on('error', () => {});
  try {
    await client.connect();
    return undefined;
  } catch (err) {
    const e = err as { code?: string; message?: string };
    const message = messageOf(err);
    if (e.code === '28P01') return `authentication failed (password of user '${user}')`;
    if (e.code === '28000') return `connection refused by the server: ${message}`;
    if (/does not support SSL/i.test(message)) return `TLS asked (sslmode=${mode ?? 'verify-full'}) but the server does not offer it`;
    if (/client password must be a string|password must be a string/i.test(message)) return `the server asks for a password and DATABASE_URL gives none for user '${user}'`;
    return tlsRefusal(err);
  } finally {
    await client.end().catch(() => {});
  }
}

async function checkClickHouse(c: Config): Promise<Refusal> {
  const ch = createClickHouse(c, '', CHECK_MS, SILENT);
  try {
    // ping does not authenticate; a query does.
    // (Any server of several that answers will do: reads go to those that serve.)
    await ch.rows(sql`SELECT 1`);
    return undefined;
  } catch (err) {
    // Newer servers say AUTHENTICATION_FAILED (516); older ones name the cause (192 unknown user, 193 wrong password).
    if (/\bCode: (516|192|193|194)\b|Authentication failed|Wrong password|Unknown user|password is incorrect/i.test(messageOf(err))) return `authentication failed (as user '${c.CLICKHOUSE_USER}')`;
    return tlsRefusal(err);
  } finally {
    await ch.close().catch(() => {});
  }
}

/** How long a TLS handshake may take before a silent server counts as a plaintext one. */
const HANDSHAKE_MS = 5000;

async function checkRedis(c: Config): Promise<Refusal> {
  const url = new URL(c.REDIS_URL);
  const user = decodeURIComponent(url.username) || 'default';
  if (url.protocol === 'rediss:') {
    const tls = redisTls(c).tls ?? {};
    const refusal = await tlsHandshakeRefusal(url.hostname.replace(/^\[|\]$/g, ''), Number(url.port || 6379), tls, HANDSHAKE_MS);
    if (refusal) return refusal;
  }
  // One attempt, no reconnecting and no queueing: the answer of this connection is the check's.
  const redis = new Redis(c.REDIS_URL, { ...redisTls(c), lazyConnect: true, connectTimeout: CHECK_MS, retryStrategy: () => null, maxRetriesPerRequest: 0, enableOfflineQueue: false });
  let failure: unknown;
  redis.on('error', (err) => (failure ??= err));
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (err) {
    const message = messageOf(failure ?? err);
    if (/WRONGPASS|invalid password|invalid username-password/i.test(message) || /AUTH.*without any password configured/i.test(message)) return `authentication failed (as user '${user}')`;
    if (/NOAUTH/i.test(message)) return `the server asks for a password and REDIS_URL gives none`;
    return tlsRefusal(failure ?? err);
  } finally {
    redis.disconnect();
  }
}

async function checkKafka(c: Config): Promise<Refusal> {
  const brokers = c.KAFKA_BROKERS.split(',').map((b) => b.trim()).filter(Boolean);
  const admin = new Kafka({
    clientId: c.KAFKA_CLIENT_ID,
    brokers,
    ...kafkaSecurity(c),
    // As the service's own clients (createKafka): a seed broker that hangs costs the start 3 s, not 15.
    connectionTimeout: 3000,
    authenticationTimeout: CHECK_MS,
    // A TLS listener keeps a plaintext client's first request unanswered: failed in time to ask below whether it speaks TLS.
    requestTimeout: HANDSHAKE_MS,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
  }).admin();
  try {
    await admin.connect();
    return undefined;
  } catch (err) {
    const names = [(err as Error).name, ((err as { originalError?: Error }).originalError ?? (err as { cause?: Error }).cause)?.name];
    const message = messageOf(err);
    if (names.includes('KafkaJSSASLAuthenticationError') || /SASL .*authentication failed|SASL_AUTHENTICATION_FAILED/i.test(message)) return `authentication failed (${kafkaIdentity(c)})`;
    const type = (err as { type?: string }).type;
    if (c.KAFKA_SASL_MECHANISM && (type === 'ILLEGAL_SASL_STATE' || type === 'UNSUPPORTED_SASL_MECHANISM' || /SASL state|SASL mechanism/i.test(message))) return `the broker does not take SASL ${c.KAFKA_SASL_MECHANISM.toUpperCase()} on this listener (${message})`;
    if (c.KAFKA_SSL !== 'on') {
      const [host, port] = splitHostPort(brokers[0] ?? '');
      if (host && (await speaksTls(host, port, HANDSHAKE_MS))) return `the broker's listener speaks TLS and KAFKA_SSL is off: set KAFKA_SSL=on`;
    }
    return tlsRefusal(err);
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

async function checkRegistry(c: Config): Promise<Refusal> {
  const connection = registryConnection(c);
  try {
    const { status } = await registryGet(connection, '/config', CHECK_MS);
    if (status === 401 || status === 403) {
      return connection.auth ? `authentication failed (HTTP ${status}, basic auth as user '${connection.auth.username}')` : `the registry asks for authentication (HTTP ${status}): set SCHEMA_REGISTRY_USERNAME and SCHEMA_REGISTRY_PASSWORD`;
    }
    return undefined;
  } catch (err) {
    return tlsRefusal(err);
  } finally {
    connection.agent.destroy();
  }
}

/** `host:port` or `[v6]:port`. */
function splitHostPort(address: string): [string, number] {
  const at = address.lastIndexOf(':');
  return [address.slice(0, at).replace(/^\[|\]$/g, ''), Number(address.slice(at + 1))];
}

const CHECKS: Record<string, (c: Config) => Promise<Refusal>> = {
  postgres: checkPostgres,
  clickhouse: checkClickHouse,
  redis: checkRedis,
  kafka: checkKafka,
  'schema registry': checkRegistry,
};

/** Throws StartUpError naming every service that refused the settings, one line each. */
export async function checkConnections(config: Config): Promise<void> {
  const refusals = await Promise.all(
    Object.entries(CHECKS).map(async ([service, check]) => {
      // A check that cannot finish in time is not a refusal: the clients that retry take over.
      const refusal = await within(check(config), CHECK_MS + 1000).catch(() => undefined);
      return refusal ? `${service}: ${refusal}` : undefined;
    }),
  );
  const found = refusals.filter((r): r is string => r !== undefined);
  if (found.length > 0) throw new StartUpError(found.join('\n'));
}
