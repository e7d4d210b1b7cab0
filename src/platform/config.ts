// Typed configuration read once from the environment. The platform declares
// its own settings here; each product declares its own beside its code
// (src/links/config.ts) with the same TypeBox checks, and loadConfig combines
// them. Every setting has a default that matches the local stack
// (infra/local), so a developer needs no .env file; a bad value stops start-up
// with a message naming the variable.
import { Type, type Static, type TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { connectionProblems, withDatabaseCa } from './connection-settings.ts';
import { isSecret, readSettingFiles, shownValue } from './setting-files.ts';
import { parseOrigins } from './mcp/allowed-origins.ts';
import { secretsKeysProblems } from './secrets/secrets-keys.ts';

export const ConfigSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('test'), Type.Literal('production')], { default: 'development' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  HTTP_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  HTTP_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  /** The operations port's address (/metrics, and /readyz of worker processes): loopback unless an operator opens it. */
  METRICS_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  /** Its port: unset, 9464 for the ingress and 9465 for a worker process; 0 any free port (logged); -1 none. */
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: -1, maximum: 65535 })),
  /** Public base URL of the service: the OpenAPI document's server, and the base products build their public URLs on. */
  PUBLIC_BASE_URL: Type.String({ pattern: '^https?://[^/]+$', default: 'http://127.0.0.1:3000' }),
  /** Comma-separated addresses/CIDRs of proxies whose X-Forwarded-For is honoured; empty trusts none. */
  TRUSTED_PROXIES: Type.String({ default: '' }),
  /** Bearer token (16+ characters) for every product's operator endpoints under /admin/v1; empty disables them. */
  ADMIN_TOKEN: Type.String({ pattern: '^(|\\S{16,})$', default: '', secret: true }),
  /**
   * Keys that seal stored secrets (secrets/secrets-keys.ts): `id:base64key,…`, the first seals, all open.
   * No pattern here: a refused value would be printed; secretsKeysProblems names only ids and positions.
   */
  SECRETS_KEYS: Type.String({ default: '', secret: true }),
  /** Browser origins (https://app.example.com, comma-separated) whose pages may call POST /api/mcp, besides PUBLIC_BASE_URL's own; other Origins get 403. */
  MCP_ALLOWED_ORIGINS: Type.String({ default: '' }),
  /** Failed authentication attempts per minute per IP before 429 (spec: 10). */
  AUTH_ATTEMPTS_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10 }),
  /** Per-IP limits count an IPv6 client by its network of this many bits (a host usually has a whole /64); IPv4 per address. */
  IPV6_LIMIT_PREFIX_LENGTH: Type.Integer({ minimum: 16, maximum: 128, default: 64 }),
  /** May carry a password, and `sslmode` (`disable`, `verify-full`…) and `sslrootcert=<file>` (connection-settings.ts). */
  DATABASE_URL: Type.String({ pattern: '^postgres(ql)?://', default: 'postgres://postgres@127.0.0.1:5432/linkmail', secret: true }),
  /** The CA that signed the Postgres server's certificate: the same as `sslrootcert` in DATABASE_URL, which it implies `sslmode=verify-full` for. */
  DATABASE_CA_FILE: Type.String({ default: '' }),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  /** How long a query may wait for a Postgres connection (one being opened, or a free one when all are busy) before it fails. */
  DATABASE_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 300_000, default: 10_000 }),
  /**
   * A session in a transaction, or holding a worker's advisory lock, that sends nothing for this
   * long is ended by Postgres and its locks freed: how long a stopped process (SIGSTOP, a frozen VM)
   * can block the others. Below ACTOR_SESSION_TIMEOUT_MS, its locks are gone before its partitions move.
   */
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 10_000 }),
  KAFKA_BROKERS: Type.String({ minLength: 1, default: '127.0.0.1:9092' }),
  KAFKA_CLIENT_ID: Type.String({ minLength: 1, default: 'linkmail' }),
  /** TLS to the brokers (on/off); the CA that signed their certificates unless a public one did; a client certificate and its key (mutual TLS). */
  KAFKA_SSL: Type.Union(['on', 'off'].map((v) => Type.Literal(v)), { default: 'off' }),
  KAFKA_SSL_CA_FILE: Type.String({ default: '' }),
  KAFKA_SSL_CERT_FILE: Type.String({ default: '' }),
  KAFKA_SSL_KEY_FILE: Type.String({ default: '' }),
  /** SASL authentication to the brokers: empty for none. */
  KAFKA_SASL_MECHANISM: Type.Union(['', 'plain', 'scram-sha-256', 'scram-sha-512'].map((v) => Type.Literal(v)), { default: '' }),
  KAFKA_SASL_USERNAME: Type.String({ default: '' }),
  KAFKA_SASL_PASSWORD: Type.String({ default: '', secret: true }),
  /** Prepended to every topic and consumer group name; empty in production, set by tests to isolate runs. */
  TOPIC_PREFIX: Type.String({ pattern: '^[a-zA-Z0-9._-]*$', default: '' }),
  SCHEMA_REGISTRY_URL: Type.String({ pattern: '^https?://', default: 'http://127.0.0.1:8081/apis/ccompat/v7' }),
  /** Basic authentication to the registry (both or neither), and the CA of an https URL's server unless a public one signed it. */
  SCHEMA_REGISTRY_USERNAME: Type.String({ default: '' }),
  SCHEMA_REGISTRY_PASSWORD: Type.String({ default: '', secret: true }),
  SCHEMA_REGISTRY_CA_FILE: Type.String({ default: '' }),
  /** The ClickHouse server, or the replicas of a replicated deployment comma-separated (reads go to those that serve). */
  CLICKHOUSE_URL: Type.String({ pattern: '^https?://[^\\s,;/]+(/[^\\s,;]*)?(\\s*,\\s*https?://[^\\s,;/]+(/[^\\s,;]*)?)*$', default: 'http://127.0.0.1:8123' }),
  /** `on`: tables are created Replicated*MergeTree (one shard; the servers' `{shard}` and `{replica}` macros, ZooKeeper); `off`: today's engines on a single server. */
  CLICKHOUSE_REPLICATED: Type.Union(['on', 'off'].map((v) => Type.Literal(v)), { default: 'off' }),
  CLICKHOUSE_DATABASE: Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$', default: 'linkmail' }),
  CLICKHOUSE_USER: Type.String({ default: 'default' }),
  CLICKHOUSE_PASSWORD: Type.String({ default: '', secret: true }),
  /** The CA of an https CLICKHOUSE_URL's server, unless a public one signed it. */
  CLICKHOUSE_CA_FILE: Type.String({ default: '' }),
  /** `rediss://` for TLS; a password (`redis://:password@…`) or an ACL user (`redis://user:password@…`). */
  REDIS_URL: Type.String({ pattern: '^rediss?://', default: 'redis://127.0.0.1:6379/0', secret: true }),
  /** The CA of a rediss:// server, unless a public one signed it. */
  REDIS_CA_FILE: Type.String({ default: '' }),
  /** How long a graceful shutdown may take to drain in-flight work before the process exits anyway. */
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000 }),
  /** Actor runtime: handler attempts before a message goes to the dead-letter topic, and the first backoff. */
  ACTOR_MAX_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
  ACTOR_RETRY_BASE_MS: Type.Integer({ minimum: 1, maximum: 60_000, default: 200 }),
  /**
   * How long the broker waits for a silent worker (a killed process) before its partitions go to
   * another. Workers heartbeat a third of it apart, and at least every 3 s. The broker's floor is 6 s.
   */
  ACTOR_SESSION_TIMEOUT_MS: Type.Integer({ minimum: 6000, maximum: 300_000, default: 30_000 }),
});

export type Config = Static<typeof ConfigSchema>;

/** A product's settings: their schema, and rules across settings that a schema cannot say. */
export interface ProductSettings<S extends TObject = TObject> {
  product: string;
  schema: S;
  /** Problems with the combined configuration, one line each (empty when fine). */
  check?: (config: Config & Static<S>) => string[];
}

/** The items of a comma-separated setting, trimmed, without empty ones. */
export const listSetting = (value: string): string[] => value.split(',').map((item) => item.trim()).filter(Boolean);

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The platform's schema and the products' in one, refusing a setting declared twice. */
function combinedSchema(products: readonly ProductSettings[]): TObject {
  const properties: TObject['properties'] = { ...ConfigSchema.properties };
  for (const { product, schema } of products) {
    for (const [key, value] of Object.entries(schema.properties)) {
      if (key in properties) throw new Error(`setting ${key} of ${product} is already declared`);
      properties[key] = value;
    }
  }
  return Type.Object(properties);
}

/** Several ClickHouse servers are replicas of one another, or reads would see a different store each time. */
export const clickhouseProblems = (config: Pick<Config, 'CLICKHOUSE_URL' | 'CLICKHOUSE_REPLICATED'>): string[] =>
  listSetting(config.CLICKHOUSE_URL).length > 1 && config.CLICKHOUSE_REPLICATED !== 'on'
    ? ['CLICKHOUSE_URL names several servers: they must be replicas of one shard, with CLICKHOUSE_REPLICATED=on']
    : [];

/** MCP_ALLOWED_ORIGINS entries that are not origins, one line each. */
export const mcpOriginsProblems = (config: Pick<Config, 'MCP_ALLOWED_ORIGINS'>): string[] =>
  parseOrigins(config.MCP_ALLOWED_ORIGINS).invalid.map((entry) => `MCP_ALLOWED_ORIGINS: ${entry} is not an origin (scheme://host[:port], http or https, no path)`);

/** Reads and validates the platform's settings and the given products'; throws ConfigError listing every bad variable. */
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
/** The settings of these products, together. */
export type SettingsOf<P extends readonly ProductSettings<any>[]> = Intersection<{ [K in keyof P]: P[K] extends ProductSettings<infer S> ? Static<S> : never }[number]>;

/** "expected one of a, b, c" for a setting of a few fixed values (NODE_ENV, LOG_LEVEL): TypeBox says only "Expected union value". */
function choicesOf(schema: object): string | undefined {
  const values = (schema as { anyOf?: { const?: unknown }[] }).anyOf?.map((s) => s.const);
  return values && values.every((v) => typeof v === 'string') ? `expected one of ${values.join(', ')}` : undefined;
}

export function loadConfig(env?: NodeJS.ProcessEnv): Config;
export function loadConfig<P extends readonly ProductSettings<any>[]>(env: NodeJS.ProcessEnv, products: P): Config & SettingsOf<P>;
export function loadConfig(env: NodeJS.ProcessEnv = process.env, products: readonly ProductSettings[] = []): Config {
  const schema = combinedSchema(products);
  const raw: Record<string, unknown> = {};
  // Any setting may come from a file instead (`<NAME>_FILE`), as Kubernetes and Docker hand over secrets.
  const files = readSettingFiles(env, Object.keys(schema.properties));
  if (files.problems.length > 0) throw new ConfigError(`invalid configuration:\n${files.problems.map((p) => `  ${p}`).join('\n')}`);
  for (const key of Object.keys(schema.properties)) {
    const value = files.values[key] ?? env[key];
    // A blank variable means "use the default", as in most twelve-factor services.
    if (value !== undefined && value.trim() !== '') raw[key] = value.trim();
  }
  const withDefaults = Value.Default(schema, raw);
  const converted = Value.Convert(schema, withDefaults);
  const errors = [...Value.Errors(schema, converted)];
  if (errors.length > 0) {
    // A secret's value is never printed (a URL's password is masked).
    const lines = errors.map((e) => `  ${e.path.slice(1)}=${shownValue(e.value, isSecret(schema.properties[e.path.slice(1)]))}: ${choicesOf(e.schema) ?? e.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const config = withDatabaseCa(converted as Config);
  const problems = [...secretsKeysProblems(config), ...clickhouseProblems(config), ...mcpOriginsProblems(config), ...connectionProblems(config), ...products.flatMap((p) => p.check?.(config as never) ?? [])];
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  return config;
}
