// The mail product's webhook deliveries: its tables (migration 022) in the
// platform's webhook deliveries, with what only mail does — one delivery per event
// and subscribed endpoint, and a replay by event id. Retries follow
// MAIL_WEBHOOK_RETRY_DELAYS_MS (by default Resend's: 5 s, 5 min, 30 min, 2 h,
// 5 h, 10 h, 10 h — eight attempts over about a day).
import { isUuid } from '../../platform/http/validation.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { SealedSecrets } from '../../platform/secrets/sealed-secrets.ts';
import { TableWebhookDeliveries } from '../../platform/webhooks/table-webhook-deliveries.ts';

const MAIL_TABLES = { endpoints: 'mail_webhook_endpoints', deliveries: 'mail_webhook_deliveries', attempts: 'mail_webhook_attempts', ownerColumn: 'organization_id', eventColumn: 'event_id' };

export interface QueuedMailEvent {
  organizationId: string;
  eventId: string;
  /** The webhook event name (email.delivered, …): only endpoints subscribed to it get it. */
  type: string;
  occurredAt: number;
  body: string;
}

/** "5000,300000" → [5000, 300000]: the wait after each failed attempt; attempts = delays + 1. */
export const parseRetryDelays = (setting: string): number[] => setting.split(',').map((s) => Number(s.trim()));

export class MailWebhookDeliveries extends TableWebhookDeliveries {
  constructor(pg: Pool, delaysMs: readonly number[], secrets: SealedSecrets) {
    super(pg, MAIL_TABLES, { maxAttempts: delaysMs.length + 1, delayMs: (attempt) => delaysMs[Math.min(attempt, delaysMs.length) - 1] ?? 0 }, secrets);
  }

  /** Of these organizations, those with an enabled endpoint (the others' events need no decoding). */
  async organizationsWithEndpoints(organizationIds: readonly string[]): Promise<Set<string>> {
    const ids = [...new Set(organizationIds)].filter(isUuid);
    if (ids.length === 0) return new Set();
    const { rows } = await this.pg.query<{ organization_id: string }>(
      "SELECT DISTINCT organization_id FROM mail_webhook_endpoints WHERE organization_id = ANY($1::uuid[]) AND status = 'enabled'",
      [ids],
    );
    return new Set(rows.map((r) => r.organization_id));
  }

  /** Queues one delivery per event and enabled endpoint subscribed to it that existed when it happened; an event seen again queues nothing. */
  async enqueue(events: readonly QueuedMailEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const result = await this.pg.query(
      `INSERT INTO mail_webhook_deliveries (id, endpoint_id, organization_id, event_type, event_id, body, state, next_attempt_at)
       SELECT gen_random_uuid(), e.id, e.organization_id, s.type, s.event_id, s.body, 'queued', now()
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::double precision[], $5::text[]) AS s(organization_id, event_id, type, ms, body)
         JOIN mail_webhook_endpoints e ON e.organization_id = s.organization_id AND e.status = 'enabled' AND s.type = ANY(e.events)
                                      AND e.created_at <= to_timestamp(s.ms / 1000) + interval '1 second'
       ON CONFLICT (endpoint_id, event_id) WHERE redelivery_of IS NULL DO NOTHING`,
      [events.map((e) => e.organizationId), events.map((e) => e.eventId), events.map((e) => e.type), events.map((e) => e.occurredAt), events.map((e) => e.body)],
    );
    return result.rowCount ?? 0;
  }

  /** Queues the event again for the endpoint (same body and webhook-id, fresh attempts); false if the endpoint never had it. */
  async replay(endpointId: string, eventId: string): Promise<boolean> {
    const { rows } = await this.pg.query<{ id: string }>(
      'SELECT id FROM mail_webhook_deliveries WHERE endpoint_id = $1 AND event_id = $2 ORDER BY created_at DESC LIMIT 1',
      [endpointId, eventId],
    );
    return rows[0] ? (await this.redeliver(endpointId, rows[0].id)) !== undefined : false;
  }
}
