// Turns the configuration into the link product's services, once per process.
// The ingress and the worker processes both start from here, so no service is
// built from configuration in two places.
import type { Config } from '../platform/config.ts';
import { listSetting } from '../platform/config.ts';
import type { Outbox } from '../platform/outbox/outbox.ts';
import type { Platform } from '../platform/platform.ts';
import { CampaignStore } from './campaigns/campaign-store.ts';
import { LinkChangelog } from './changelog/link-changelog.ts';
import type { LinksConfig } from './config.ts';
import { Conversions } from './conversions/conversions.ts';
import { FunnelQueries } from './conversions/funnel-query.ts';
import { RenderPool } from './qr/render-pool.ts';
import { ClickIds } from './scans/click-id.ts';
import { LifetimeScans } from './scans/lifetime-scans.ts';
import { ScanLimitCloser } from './scans/scan-limit-closer.ts';
import { LinkImportStaging } from './short-links/link-import-staging.ts';
import { LinkStore } from './short-links/link-store.ts';
import type { UploadLimits } from './short-links/upload-limits.ts';
import { createPool } from '../platform/postgres/pool.ts';
import type { ReservedShortIds } from './short-links/short-id.ts';
import { DeliveryLog } from './webhooks/delivery-log.ts';
import { DeliveryQueue } from './webhooks/delivery-queue.ts';
import { LinkEventQueue } from './webhooks/link-events.ts';
import type { WebhookWorkerOptions } from './webhooks/webhook-worker.ts';
import { WebhookStore } from './webhooks/webhook-store.ts';
import { ApiKeys } from './workspaces/api-keys.ts';
import { Workspaces } from './workspaces/workspaces.ts';

import { ScanPrivacy } from './privacy/scan-privacy.ts';
import { scansTopic } from '../../topics/scans.ts';
import { prefixed } from '../platform/kafka/topic-definition.ts';
export type LinksProcessConfig = Config & LinksConfig;

export interface LinksServices {
  config: LinksProcessConfig;
  /** Base URL of short links (SHORT_LINK_BASE_URL, else PUBLIC_BASE_URL). */
  shortLinkBase: string;
  keys: ApiKeys;
  workspaces: Workspaces;
  links: LinkStore;
  /** Links' scans over their whole life, from ClickHouse: what scan limits count. */
  lifetimeScans: LifetimeScans;
  /** Closes links at their scan limit after the scan sink stored their scans. */
  scanLimits: ScanLimitCloser;
  campaigns: CampaignStore;
  changelog: LinkChangelog;
  conversions: Conversions;
  funnels: FunnelQueries;
  /** Signs click IDs at the redirect and checks them when a conversion is tracked. */
  clickIds: ClickIds;
  /** The redirect path's settings. */
  redirects: { journalDir: string; perMinutePerIp: number; missCacheSize: number; missCacheMs: number; revalidateMs: number; scanLimitSeedWaitMs: number };
  webhooks: { store: WebhookStore; log: DeliveryLog; queue: DeliveryQueue };
  /** CSV imports: where their rows wait for the body's end (on a pool of their own), and the upload's bounds. */
  imports: { staging: LinkImportStaging; limits: UploadLimits };
  webhookWorker: WebhookWorkerOptions;
  /** Link events (link.created/updated/deleted) waiting for their changelog message, queued by the links-link-events worker. */
  linkEvents: LinkEventQueue;
  /** The QR and barcode render threads; started only by the process that renders (the ingress). */
  renderPool: () => RenderPool;
  qrImages: { timeoutMs: number; maxBytes: number; allowHosts: string[] };
  /** The product's transactional outboxes, relayed by the platform in the ingress. */
  outboxes: readonly Outbox[];
  /** Applies scan erasures and retention; run beside the scan sink. */
  scanPrivacy: ScanPrivacy;
}

export interface LinksWiringOptions {
  /** Root paths the server serves, which short IDs may not take (the ingress passes its server's). */
  reservedShortIds?: ReservedShortIds;
}

export function wireLinks(platform: Platform, config: LinksProcessConfig, options: LinksWiringOptions = {}): LinksServices {
  const { pg, log, publisher } = platform;
  const shortLinkBase = config.SHORT_LINK_BASE_URL || config.PUBLIC_BASE_URL;
  const queue = new DeliveryQueue(pg, { baseMs: config.WEBHOOK_RETRY_BASE_MS, factor: config.WEBHOOK_RETRY_FACTOR }, platform.secrets);
  const changelog = new LinkChangelog(pg, publisher, log);
  const clickIds = new ClickIds(config.CLICK_ID_SECRET);
  const conversions = new Conversions(pg, publisher, log, clickIds);
  const lifetimeScans = new LifetimeScans(platform.clickhouse);
  const links = new LinkStore(pg, lifetimeScans, { ownBaseUrls: [shortLinkBase, config.PUBLIC_BASE_URL], reserved: options.reservedShortIds, countTimeoutMs: config.SCAN_LIMIT_COUNT_TIMEOUT_MS, log });
  return {
    config,
    shortLinkBase,
    imports: { staging: new LinkImportStaging(importPool(platform, config)), limits: { maxBytes: config.LINK_IMPORT_MAX_BYTES, stallMs: config.LINK_IMPORT_STALL_TIMEOUT_MS, deadlineMs: config.LINK_IMPORT_DEADLINE_MS } },
    keys: new ApiKeys(pg),
    workspaces: new Workspaces(pg),
    links,
    lifetimeScans,
    scanLimits: new ScanLimitCloser(links, lifetimeScans, changelog, log),
    campaigns: new CampaignStore(pg),
    changelog,
    conversions,
    funnels: new FunnelQueries(platform.clickhouse, pg, links.baseHost),
    clickIds,
    redirects: {
      journalDir: config.SCAN_JOURNAL_DIR,
      perMinutePerIp: config.REDIRECTS_PER_MINUTE_PER_IP,
      missCacheSize: config.REDIRECT_MISS_CACHE_SIZE,
      missCacheMs: config.REDIRECT_MISS_CACHE_MS,
      revalidateMs: config.REDIRECT_REVALIDATE_MS,
      scanLimitSeedWaitMs: config.SCAN_LIMIT_SEED_WAIT_MS,
    },
    webhooks: {
      store: new WebhookStore(pg, { allowHosts: listSetting(config.WEBHOOK_ALLOW_HOSTS), secretGraceMs: config.WEBHOOK_SECRET_GRACE_MS, secrets: platform.secrets }),
      log: new DeliveryLog(pg),
      queue,
    },
    webhookWorker: {
      queue,
      sender: { timeoutMs: config.WEBHOOK_TIMEOUT_MS, allowHosts: listSetting(config.WEBHOOK_ALLOW_HOSTS), caFile: config.WEBHOOK_CA_FILE || undefined },
      dispatcher: {
        concurrency: config.WEBHOOK_CONCURRENCY,
        logRetentionDays: config.WEBHOOK_LOG_RETENTION_DAYS,
        perWorkspace: config.WEBHOOK_WORKSPACE_CONCURRENCY,
        perEndpoint: config.WEBHOOK_ENDPOINT_CONCURRENCY,
        leaseMarginMs: config.WEBHOOK_LEASE_MARGIN_MS,
        pollMs: config.WEBHOOK_POLL_MS,
        timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      },
    },
    linkEvents: new LinkEventQueue(pg, shortLinkBase),
    renderPool: () => new RenderPool({ threads: config.RENDER_THREADS || undefined, maxQueue: config.RENDER_QUEUE || undefined }),
    outboxes: [changelog.outbox, conversions.outbox],
    scanPrivacy: new ScanPrivacy({
      ch: platform.clickhouse,
      pg,
      log,
      // The scan sink's lock of each partition (idempotent-sink.ts names them so).
      sinkLocks: Array.from({ length: scansTopic.partitions }, (_, p) => `scan-sink:${prefixed(config.TOPIC_PREFIX, scansTopic.name)}:${p}`),
      intervalMs: config.SCAN_ERASURE_INTERVAL_MS,
      retentionEveryMs: config.SCAN_RETENTION_INTERVAL_MS,
      mutationTimeoutMs: config.SCAN_MUTATION_TIMEOUT_MS,
      arrivalMs: config.SCAN_ERASURE_ARRIVAL_MS,
      maxAttempts: config.SCAN_ERASURE_MAX_ATTEMPTS,
      retryBaseMs: config.SCAN_ERASURE_RETRY_BASE_MS,
    }),
    qrImages: { timeoutMs: config.QR_IMAGE_FETCH_TIMEOUT_MS, maxBytes: config.QR_IMAGE_MAX_BYTES, allowHosts: listSetting(config.OUTBOUND_ALLOW_HOSTS) },
  };
}

/**
 * The pool CSV imports write on: a few connections of their own (LINK_IMPORT_POOL_SIZE), so
 * imports of many workspaces at once wait for each other, never the ingress's other requests.
 * Opened on first use.
 */
function importPool(platform: Platform, config: LinksProcessConfig) {
  const pool = createPool(config, { max: config.LINK_IMPORT_POOL_SIZE, use: 'link-import' });
  platform.shutdown.add('link import postgres', () => pool.end());
  return pool;
}
