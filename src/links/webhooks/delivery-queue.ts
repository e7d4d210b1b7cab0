// The link product's webhook deliveries: its tables (migration 006) in the
// platform's webhook deliveries, with what only links do — queueing one delivery
// per scan and endpoint. Retries: 5 attempts, base × factor^(n-1) apart.
import type { Pool } from '../../platform/postgres/pool.ts';
import type { SealedSecrets } from '../../platform/secrets/sealed-secrets.ts';
import { isUuid } from '../../platform/http/validation.ts';
import { TableWebhookDeliveries } from '../../platform/webhooks/table-webhook-deliveries.ts';

export const MAX_ATTEMPTS = 5;

export interface RetrySchedule {
  baseMs: number;
  factor: number;
}

/** Delay after failed attempt `attempt` (1-based): base × factor^(attempt-1). */
export const retryDelayMs = (schedule: RetrySchedule, attempt: number) => schedule.baseMs * schedule.factor ** (attempt - 1);

export interface QueuedScan {
  workspaceId: string;
  /** The event's id: the scan's, or the conversion's for conversion.created. */
  scanId: string;
  timestamp: number;
  body: string;
}

const LINK_TABLES = { endpoints: 'webhook_endpoints', deliveries: 'webhook_deliveries', attempts: 'webhook_attempts', ownerColumn: 'workspace_id', eventColumn: 'scan_id' };

export class DeliveryQueue extends TableWebhookDeliveries {
  constructor(pg: Pool, schedule: RetrySchedule, secrets: SealedSecrets) {
    super(pg, LINK_TABLES, { maxAttempts: MAX_ATTEMPTS, delayMs: (attempt) => retryDelayMs(schedule, attempt) }, secrets);
  }

  /**
   * Of these workspaces, those with at least one endpoint: their scans may need deliveries, the
   * others' need none (one indexed lookup per batch instead of a body per scan sent to Postgres).
   */
  async workspacesWithEndpoints(workspaceIds: readonly string[]): Promise<Set<string>> {
    const ids = [...new Set(workspaceIds)].filter(isUuid);
    if (ids.length === 0) return new Set();
    const { rows } = await this.pg.query<{ workspace_id: string }>('SELECT DISTINCT workspace_id FROM webhook_endpoints WHERE workspace_id = ANY($1::uuid[])', [ids]);
    return new Set(rows.map((r) => r.workspace_id));
  }

  /**
   * Queues one delivery per event and endpoint of its workspace that existed at the event's time and
   * wants its type (scan.created, or conversion.created); an event seen again queues nothing.
   */
  async enqueue(scans: readonly QueuedScan[], eventType: 'scan.created' | 'conversion.created' = 'scan.created'): Promise<number> {
    if (scans.length === 0) return 0;
    const result = await this.pg.query(
      `INSERT INTO webhook_deliveries (id, endpoint_id, workspace_id, event_type, scan_id, body, state, next_attempt_at)
       SELECT gen_random_uuid(), e.id, e.workspace_id, $5::text, s.scan_id, s.body, 'queued', now()
         FROM unnest($1::uuid[], $2::uuid[], $3::double precision[], $4::text[]) AS s(workspace_id, scan_id, ms, body)
         JOIN webhook_endpoints e ON e.workspace_id = s.workspace_id AND $5::text = ANY (e.events) AND e.created_at <= to_timestamp(s.ms / 1000) + interval '1 second'
       ON CONFLICT (endpoint_id, scan_id) WHERE redelivery_of IS NULL DO NOTHING`,
      [scans.map((s) => s.workspaceId), scans.map((s) => s.scanId), scans.map((s) => s.timestamp), scans.map((s) => s.body), eventType],
    );
    return result.rowCount ?? 0;
  }
}
