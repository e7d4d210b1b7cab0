// The webhook worker kind. Its consumer reads the `scans` topic (keyed by
// workspace, so a workspace's scans arrive in order on one partition) and
// durably queues one delivery per scan and endpoint before any attempt; the
// offsets are committed only after that. Its dispatcher, running beside the
// consumer, makes the attempts on the schedule kept in Postgres.
import type { ActorMessage, BatchWorkerKind } from '../../platform/actors/worker-kind.ts';
import { listSetting } from '../../platform/config.ts';
import type { Platform } from '../../platform/platform.ts';
import { scansTopic } from '../../../topics/scans.ts';
import type { ScanEvent } from '../scans/scan-event.ts';
import { DeliveryQueue } from './delivery-queue.ts';
import { scanCreatedBody } from './scan-payload.ts';
import { WebhookDispatcher } from './webhook-dispatcher.ts';
import { createWebhookSender } from './webhook-sender.ts';

export function webhookKind(platform: Platform): BatchWorkerKind<ScanEvent> {
  const { config, pg, log } = platform;
  const queue = new DeliveryQueue(pg, { baseMs: config.WEBHOOK_RETRY_BASE_MS, factor: config.WEBHOOK_RETRY_FACTOR });
  const sender = createWebhookSender({
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowHosts: listSetting(config.WEBHOOK_ALLOW_HOSTS),
    caFile: config.WEBHOOK_CA_FILE || undefined,
  });
  const dispatcher = new WebhookDispatcher(queue, sender, log, {
    concurrency: config.WEBHOOK_CONCURRENCY,
    logRetentionDays: config.WEBHOOK_LOG_RETENTION_DAYS,
    perWorkspace: config.WEBHOOK_WORKSPACE_CONCURRENCY,
    perEndpoint: config.WEBHOOK_ENDPOINT_CONCURRENCY,
    leaseMarginMs: config.WEBHOOK_LEASE_MARGIN_MS,
    pollMs: config.WEBHOOK_POLL_MS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
  });
  return {
    kind: 'webhooks',
    topics: [scansTopic],
    concurrency: 2,
    background: dispatcher,
    handleBatch: async (messages: ActorMessage<ScanEvent>[]) => {
      const scans = messages.map(({ value }) => ({ workspaceId: value.workspaceId, scanId: value.scanId, timestamp: value.timestamp, body: scanCreatedBody(value) }));
      if ((await queue.enqueue(scans)) > 0) dispatcher.nudge();
    },
  };
}
