// Typed configuration read once from the environment. Every setting has a
// default that matches the local stack (infra/local), so a developer needs no
// .env file; a bad value stops start-up with a message naming the variable.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

export const ConfigSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('test'), Type.Literal('production')], { default: 'development' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  HTTP_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  HTTP_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  /** Public base URL of the service, used to build short URLs. */
  PUBLIC_BASE_URL: Type.String({ pattern: '^https?://[^/]+$', default: 'http://127.0.0.1:3000' }),
  /** Base URL of short links (the short domain), e.g. https://go.example.com; defaults to PUBLIC_BASE_URL. */
  SHORT_LINK_BASE_URL: Type.String({ pattern: '^(https?://[^/]+)?$', default: '' }),
  /** Secret that signs click IDs (svc_cid) and salts visitor hashes. Set a long random value in production. */
  CLICK_ID_SECRET: Type.String({ minLength: 16, default: 'development-click-id-secret' }),
  /** Redirects per minute per client IP (spec: 60). */
  REDIRECTS_PER_MINUTE_PER_IP: Type.Integer({ minimum: 1, maximum: 1_000_000_000, default: 60 }),
  /** Where the ingress journals scans before they reach Kafka (survives a Kafka outage and a restart). */
  SCAN_JOURNAL_DIR: Type.String({ minLength: 1, default: '.stack/scan-journal' }),
  /** A journal whose lease was not refreshed for this long belongs to a stopped ingress and is shipped by another. */
  SCAN_JOURNAL_LEASE_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 30_000 }),
  /** Scheduling priority (nice) of the thread that ships the journal to Kafka: above 0 it yields the CPU to redirects, and scans wait on disk longer under load. */
  SCAN_SHIPPER_NICE: Type.Integer({ minimum: 0, maximum: 19, default: 0 }),
  /** Render threads for QR codes and barcodes (0: one per core), and tasks queued beyond them before 503 (0: 4 per thread). */
  RENDER_THREADS: Type.Integer({ minimum: 0, maximum: 64, default: 0 }),
  RENDER_QUEUE: Type.Integer({ minimum: 0, maximum: 10_000, default: 0 }),
  /** Hosts that QR image fetches may reach although their addresses are private, comma-separated. */
  OUTBOUND_ALLOW_HOSTS: Type.String({ default: '' }),
  /** Halftone QR images: the largest accepted image and the time a URL may take to deliver it. */
  QR_IMAGE_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 10 * 1024 * 1024, default: 1024 * 1024 }),
  QR_IMAGE_FETCH_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 3000 }),
  /** Webhooks: the time one delivery attempt may take (connect to last byte), and the retry schedule: attempt n+1 waits BASE × FACTOR^(n-1) after attempt n fails. */
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
  WEBHOOK_RETRY_BASE_MS: Type.Integer({ minimum: 1, maximum: 86_400_000, default: 30_000 }),
  WEBHOOK_RETRY_FACTOR: Type.Number({ minimum: 1, maximum: 100, default: 4 }),
  /** Webhook attempts in flight per worker process, per workspace and per endpoint, so slow endpoints hold few of the slots. */
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 10_000, default: 512 }),
  WEBHOOK_WORKSPACE_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: 8 }),
  WEBHOOK_ENDPOINT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 100, default: 4 }),
  /** An attempt's lease outlasts its timeout by this much; after that, its dispatcher is presumed dead and the attempt counts as failed. */
  WEBHOOK_LEASE_MARGIN_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 30_000 }),
  /** Hosts webhook endpoints may use although their addresses are private (comma-separated); separate from OUTBOUND_ALLOW_HOSTS. */
  WEBHOOK_ALLOW_HOSTS: Type.String({ default: '' }),
  /** How often the dispatcher looks for due deliveries when idle. */
  WEBHOOK_POLL_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: 500 }),
  /** Finished deliveries (acknowledged, rejected, stopped) stay in the delivery log this many days. */
  WEBHOOK_LOG_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  /** After a secret rotation, requests are also signed with the old secret for this long. */
  WEBHOOK_SECRET_GRACE_MS: Type.Integer({ minimum: 0, maximum: 30 * 86_400_000, default: 86_400_000 }),
  /** A PEM file of extra CA certificates trusted for webhook endpoints (a private CA; tests); empty trusts the system CAs only. */
  WEBHOOK_CA_FILE: Type.String({ default: '' }),
  /** Comma-separated addresses/CIDRs of proxies whose X-Forwarded-For is honoured; empty trusts none. */
  TRUSTED_PROXIES: Type.String({ default: '' }),
  /** Bearer token (16+ characters) for the /admin/v1 endpoints (workspaces, keys); empty disables them. */
  ADMIN_TOKEN: Type.String({ pattern: '^(|\\S{16,})$', default: '' }),
  /** API requests per minute per workspace, shared by REST and MCP (spec: 100). */
  API_RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 100 }),
  /** Failed authentication attempts per minute per IP before 429 (spec: 10). */
  AUTH_ATTEMPTS_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10 }),
  DATABASE_URL: Type.String({ pattern: '^postgres(ql)?://', default: 'postgres://postgres@127.0.0.1:5432/linkmail' }),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  KAFKA_BROKERS: Type.String({ minLength: 1, default: '127.0.0.1:9092' }),
  KAFKA_CLIENT_ID: Type.String({ minLength: 1, default: 'linkmail' }),
  /** Prepended to every topic and consumer group name; empty in production, set by tests to isolate runs. */
  TOPIC_PREFIX: Type.String({ pattern: '^[a-zA-Z0-9._-]*$', default: '' }),
  SCHEMA_REGISTRY_URL: Type.String({ pattern: '^https?://', default: 'http://127.0.0.1:8081/apis/ccompat/v7' }),
  CLICKHOUSE_URL: Type.String({ pattern: '^https?://', default: 'http://127.0.0.1:8123' }),
  CLICKHOUSE_DATABASE: Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$', default: 'linkmail' }),
  CLICKHOUSE_USER: Type.String({ default: 'default' }),
  CLICKHOUSE_PASSWORD: Type.String({ default: '' }),
  REDIS_URL: Type.String({ pattern: '^rediss?://', default: 'redis://127.0.0.1:6379/0' }),
  SMTP_URL: Type.String({ pattern: '^smtps?://', default: 'smtp://127.0.0.1:2525' }),
  /** How long a graceful shutdown may take to drain in-flight work before the process exits anyway. */
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000 }),
  /** Actor runtime: handler attempts before a message goes to the dead-letter topic, and the first backoff. */
  ACTOR_MAX_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
  ACTOR_RETRY_BASE_MS: Type.Integer({ minimum: 1, maximum: 60_000, default: 200 }),
});

export type Config = Static<typeof ConfigSchema>;

/** The items of a comma-separated setting, trimmed, without empty ones. */
export const listSetting = (value: string): string[] => value.split(',').map((item) => item.trim()).filter(Boolean);

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads and validates the configuration; throws ConfigError listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key];
    // A blank variable means "use the default", as in most twelve-factor services.
    if (value !== undefined && value.trim() !== '') raw[key] = value.trim();
  }
  const withDefaults = Value.Default(ConfigSchema, raw);
  const converted = Value.Convert(ConfigSchema, withDefaults);
  const errors = [...Value.Errors(ConfigSchema, converted)];
  if (errors.length > 0) {
    const lines = errors.map((e) => `  ${e.path.slice(1)}=${JSON.stringify(e.value)}: ${e.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const config = converted as Config;
  if (config.NODE_ENV === 'production' && config.CLICK_ID_SECRET === 'development-click-id-secret') {
    throw new ConfigError('invalid configuration:\n  CLICK_ID_SECRET must be set in production');
  }
  return config;
}
