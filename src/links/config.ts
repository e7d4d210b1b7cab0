// The link product's settings (redirects, scans, QR rendering, webhooks, the
// API limit), checked like the platform's and combined with them by loadConfig.
import { Type, type Static } from '@sinclair/typebox';
import type { ProductSettings } from '../platform/config.ts';

export const LinksConfigSchema = Type.Object({
  /** Base URL of short links (the short domain), e.g. https://go.example.com; defaults to PUBLIC_BASE_URL. */
  SHORT_LINK_BASE_URL: Type.String({ pattern: '^(https?://[^/]+)?$', default: '' }),
  /**
   * Other host names that serve the base domain's short links (comma-separated, e.g. an old short
   * domain); outside production localhost, 127.0.0.1 and ::1 always do. Any other host that is not
   * a verified branded domain answers 404.
   */
  SHORT_LINK_HOST_ALIASES: Type.String({ pattern: '^[A-Za-z0-9.:\\[\\], -]*$', default: '' }),
  /** Branded link domains: the CNAME target and the A record addresses (comma-separated) to publish; the CNAME target defaults to the base domain's host. */
  LINK_DOMAIN_CNAME_TARGET: Type.String({ pattern: '^[A-Za-z0-9.-]*$', default: '' }),
  LINK_DOMAIN_A_TARGETS: Type.String({ pattern: '^[0-9., ]*$', default: '' }),
  /** DNS servers for branded link domain verification (ip or ip:port, comma-separated); empty: the system resolver. */
  LINK_DNS_SERVERS: Type.String({ pattern: '^[0-9a-fA-F.:\\[\\], ]*$', default: '' }),
  /** Secret that signs click IDs (svc_cid) and salts visitor hashes. Set a long random value in production. */
  CLICK_ID_SECRET: Type.String({ minLength: 16, default: 'development-click-id-secret', secret: true }),
  /** Redirects per minute per client IP (spec: 60). */
  REDIRECTS_PER_MINUTE_PER_IP: Type.Integer({ minimum: 1, maximum: 1_000_000_000, default: 60 }),
  /**
   * How long a redirect of a link with a scan limit waits for the link's scans to be counted in
   * ClickHouse when Redis has no counter for it (after a Redis restart or a changed limit); past
   * it, the redirect is let through uncounted and the scan sink's closing is the only bound.
   */
  SCAN_LIMIT_SEED_WAIT_MS: Type.Integer({ minimum: 1, maximum: 60_000, default: 500 }),
  /** How long setting a scan limit waits for the link's scans so far to be counted; past it the change is refused (503 scan_count_unavailable). */
  SCAN_LIMIT_COUNT_TIMEOUT_MS: Type.Integer({ minimum: 1, maximum: 60_000, default: 2000 }),
  /** Short IDs a redirect found neither in the link cache nor in Postgres are remembered as missing: at most this many, for this long. */
  REDIRECT_MISS_CACHE_SIZE: Type.Integer({ minimum: 0, maximum: 10_000_000, default: 10_000 }),
  REDIRECT_MISS_CACHE_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 2000 }),
  /**
   * How often each ingress asks Postgres for the links changed since its last look, so a link taken
   * down through another ingress stops redirecting here within this time even while links.changelog
   * (Kafka) cannot tell it.
   */
  REDIRECT_REVALIDATE_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 5000 }),
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
  /** How often the scan sink's workers apply pending scan erasures (and see whether retention is due); erasures take effect within about this. */
  SCAN_ERASURE_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 15_000 }),
  /** How often the retention pass drops scans older than each workspace's scanRetentionDays. */
  SCAN_RETENTION_INTERVAL_MS: Type.Integer({ minimum: 1000, maximum: 30 * 86_400_000, default: 86_400_000 }),
  /** How long an erasure or retention run waits for ClickHouse's mutations before it gives up (and runs again later). */
  SCAN_MUTATION_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 600_000 }),
  /** A visitor's erasure looks this long for its click ID's scan (still in Kafka), then ends as not_found. */
  SCAN_ERASURE_ARRIVAL_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 600_000 }),
  /** A failing erasure is tried this many times in all, then ends as failed. */
  SCAN_ERASURE_MAX_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 100, default: 8 }),
  /** Delay after a failed attempt n (1-based): this × 2^(n-1), at most a day. */
  SCAN_ERASURE_RETRY_BASE_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 60_000 }),
  /** After a secret rotation, requests are also signed with the old secret for this long. */
  WEBHOOK_SECRET_GRACE_MS: Type.Integer({ minimum: 0, maximum: 30 * 86_400_000, default: 86_400_000 }),
  /** A PEM file of extra CA certificates trusted for webhook endpoints (a private CA; tests); empty trusts the system CAs only. */
  WEBHOOK_CA_FILE: Type.String({ default: '' }),
  /**
   * CSV imports (POST /api/v1/links/import): the largest body, the longest pause between two of its
   * chunks and the longest whole upload (past them: 413 import_too_large, 408 import_stalled), and
   * the Postgres connections of the imports' own pool, apart from the ingress's.
   */
  LINK_IMPORT_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 1024 * 1024 * 1024, default: 64 * 1024 * 1024 }),
  LINK_IMPORT_STALL_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  LINK_IMPORT_DEADLINE_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 600_000 }),
  LINK_IMPORT_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 20, default: 2 }),
  /**
   * Live scan streams (src/links/live/): how far back a stream resumes from its Last-Event-ID (each
   * ingress keeps the scans of this long, read again from Kafka when its first stream opens) and at
   * most how many scans per partition of `scans` it keeps for that (the memory bound: under more
   * scans a second, the reach is shorter and an older Last-Event-ID gets a `resync` event).
   */
  LIVE_STREAM_RETENTION_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 360_000 }),
  LIVE_STREAM_RING_PER_PARTITION: Type.Integer({ minimum: 100, maximum: 10_000_000, default: 100_000 }),
  /**
   * An ingress reads the scans topic only while a live stream is open on it: this long after its last
   * stream closes it stops and drops the scans it kept (a stream reconnecting later resumes from what
   * the next start reads back, LIVE_STREAM_RETENTION_MS of it). Default: the retention.
   */
  LIVE_STREAM_IDLE_STOP_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 360_000 }),
  /** A quiet stream gets a heartbeat (a comment with its position) this often. */
  LIVE_STREAM_HEARTBEAT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 15_000 }),
  /** A client whose unsent bytes pass this is dropped with a final `end` event (slow_client). */
  LIVE_STREAM_MAX_BUFFERED_BYTES: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024 }),
  /** How often each ingress asks Postgres whether the keys of its open streams were revoked (they close within about this). */
  LIVE_STREAM_KEY_CHECK_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 1000 }),
  /** API requests per minute per workspace, shared by REST and MCP (spec: 100). */
  API_RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 100 }),
});

export type LinksConfig = Static<typeof LinksConfigSchema>;

export const linksSettings: ProductSettings<typeof LinksConfigSchema> = {
  product: 'links',
  schema: LinksConfigSchema,
  check: (config) => [
    ...(config.NODE_ENV === 'production' && config.CLICK_ID_SECRET === 'development-click-id-secret' ? ['CLICK_ID_SECRET must be set in production'] : []),
  ],
};
