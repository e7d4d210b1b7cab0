// The WEBHOOK_* settings both products' webhooks use (declared with the link
// product's settings, loaded for every process): outbound rules, timing and
// slots, and how they become the sender's and dispatcher's options.
import { listSetting } from '../config.ts';
import type { DispatcherOptions } from './webhook-dispatcher.ts';
import type { SenderOptions } from './webhook-sender.ts';

export interface WebhookSettings {
  WEBHOOK_TIMEOUT_MS: number;
  WEBHOOK_CONCURRENCY: number;
  WEBHOOK_WORKSPACE_CONCURRENCY: number;
  WEBHOOK_ENDPOINT_CONCURRENCY: number;
  WEBHOOK_LEASE_MARGIN_MS: number;
  WEBHOOK_ALLOW_HOSTS: string;
  WEBHOOK_POLL_MS: number;
  WEBHOOK_LOG_RETENTION_DAYS: number;
  WEBHOOK_SECRET_GRACE_MS: number;
  WEBHOOK_CA_FILE: string;
}

export const webhookAllowHosts = (settings: WebhookSettings): string[] => listSetting(settings.WEBHOOK_ALLOW_HOSTS);

export function webhookSenderOptions(settings: WebhookSettings, retryStatuses: readonly number[] = []): SenderOptions {
  return { timeoutMs: settings.WEBHOOK_TIMEOUT_MS, allowHosts: webhookAllowHosts(settings), caFile: settings.WEBHOOK_CA_FILE || undefined, retryStatuses };
}

/** WEBHOOK_WORKSPACE_CONCURRENCY caps each owner: a workspace, or a mail organization. */
export function webhookDispatcherOptions(settings: WebhookSettings): DispatcherOptions {
  return {
    concurrency: settings.WEBHOOK_CONCURRENCY,
    logRetentionDays: settings.WEBHOOK_LOG_RETENTION_DAYS,
    perOwner: settings.WEBHOOK_WORKSPACE_CONCURRENCY,
    perEndpoint: settings.WEBHOOK_ENDPOINT_CONCURRENCY,
    leaseMarginMs: settings.WEBHOOK_LEASE_MARGIN_MS,
    pollMs: settings.WEBHOOK_POLL_MS,
    timeoutMs: settings.WEBHOOK_TIMEOUT_MS,
  };
}
