// The webhook worker kind. Its consumer reads the `scans` topic (keyed by
// workspace, so a workspace's scans arrive in order on one partition) and
// durably queues one delivery per scan and endpoint before any attempt; the
// offsets are committed only after that. Its dispatcher, running beside the
// consumer, makes the attempts on the schedule kept in Postgres.
import type { ActorMessage, BatchWorkerKind } from '../../platform/actors/worker-kind.ts';
import type { Platform } from '../../platform/platform.ts';
import { SCAN_BATCH_FETCH, scansTopic } from '../../../topics/scans.ts';
import type { ScanEvent } from '../scans/scan-event.ts';
import type { DeliveryQueue } from './delivery-queue.ts';
import { scanCreatedBody } from './scan-payload.ts';
import { WebhookDispatcher } from '../../platform/webhooks/webhook-dispatcher.ts';
import { createWebhookSender, type SenderOptions } from '../../platform/webhooks/webhook-sender.ts';
import { linkAttemptHeaders } from './webhook-signature.ts';

/** The dispatcher's settings (WEBHOOK_*): slots per process, per workspace and per endpoint, and timing. */
export interface DispatcherOptions {
  concurrency: number;
  /** Finished deliveries older than this leave the log. */
  logRetentionDays: number;
  perWorkspace: number;
  perEndpoint: number;
  leaseMarginMs: number;
  pollMs: number;
  timeoutMs: number;
}

/** What the webhook worker is built from: the delivery queue and the settings of its sender and dispatcher (see wiring.ts). */
export interface WebhookWorkerOptions {
  queue: DeliveryQueue;
  sender: SenderOptions;
  dispatcher: DispatcherOptions;
}

export function webhookKind(platform: Platform, options: WebhookWorkerOptions): BatchWorkerKind<ScanEvent> {
  const { queue } = options;
  const { perWorkspace, ...rest } = options.dispatcher;
  const dispatcher = new WebhookDispatcher(queue, createWebhookSender(options.sender), linkAttemptHeaders, platform.log, { ...rest, perOwner: perWorkspace });
  return {
    kind: 'webhooks',
    topics: [scansTopic],
    concurrency: 2,
    background: dispatcher,
    // Deliveries are per batch (one insert): fuller fetches, a fraction of a second later.
    fetch: SCAN_BATCH_FETCH,
    // Scans are keyed by workspace: those of workspaces without endpoints are not even decoded.
    // Postgres answers UUIDs in lower case, whatever case a producer wrote the key in.
    select: async (messages) => {
      const keys = messages.map((m) => m.key.toLowerCase());
      const wanted = await queue.workspacesWithEndpoints(keys);
      return keys.map((key) => wanted.has(key));
    },
    handleBatch: async (messages: ActorMessage<ScanEvent>[]) => {
      const scans = messages.map(({ value }) => ({ workspaceId: value.workspaceId, scanId: value.scanId, timestamp: value.timestamp, body: scanCreatedBody(value) }));
      if ((await queue.enqueue(scans)) > 0) dispatcher.nudge();
    },
  };
}
