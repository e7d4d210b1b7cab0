// The durable queue and state machine of webhook deliveries, in Postgres.
// A delivery is written (queued) before its first attempt; each attempt is
// claimed with a lease and logged before the request goes out, and its result
// sets the next state and, for a retry, the time of the next attempt. A
// dispatcher killed mid-attempt leaves a lease that runs out; the attempt then
// counts as failed ("interrupted") and the schedule goes on from there.
import type { Pool } from '../../platform/postgres/pool.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { DeliveryState } from './webhook-schemas.ts';

export const MAX_ATTEMPTS = 5;

export interface RetrySchedule {
  baseMs: number;
  factor: number;
}

/** Delay after failed attempt `attempt` (1-based): base × factor^(attempt-1). */
export const retryDelayMs = (schedule: RetrySchedule, attempt: number) => schedule.baseMs * schedule.factor ** (attempt - 1);

export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  workspace_id: string;
  attempts: number;
  body: string;
  url: string;
  secrets: string[];
}

/** Free attempt slots of the dispatcher that claims. */
export interface Slots {
  busyWorkspaces: readonly string[];
  busyEndpoints: readonly string[];
  workspaceFree: (workspaceId: string) => number;
  endpointFree: (endpointId: string) => number;
}

export type AttemptResult = { outcome: 'acknowledged' | 'rejected' | 'failed'; statusCode: number | null; error: string | null };

export interface QueuedScan {
  workspaceId: string;
  scanId: string;
  timestamp: number;
  body: string;
}

export class DeliveryQueue {
  constructor(
    private readonly pg: Pool,
    private readonly schedule: RetrySchedule,
  ) {}

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

  /** Queues one delivery per scan and endpoint of its workspace that existed at scan time; a scan seen again queues nothing. */
  async enqueue(scans: readonly QueuedScan[]): Promise<number> {
    if (scans.length === 0) return 0;
    const result = await this.pg.query(
      `INSERT INTO webhook_deliveries (id, endpoint_id, workspace_id, event_type, scan_id, body, state, next_attempt_at)
       SELECT gen_random_uuid(), e.id, e.workspace_id, 'scan.created', s.scan_id, s.body, 'queued', now()
         FROM unnest($1::uuid[], $2::uuid[], $3::double precision[], $4::text[]) AS s(workspace_id, scan_id, ms, body)
         JOIN webhook_endpoints e ON e.workspace_id = s.workspace_id AND e.created_at <= to_timestamp(s.ms / 1000) + interval '1 second'
       ON CONFLICT (endpoint_id, scan_id) WHERE redelivery_of IS NULL DO NOTHING`,
      [scans.map((s) => s.workspaceId), scans.map((s) => s.scanId), scans.map((s) => s.timestamp), scans.map((s) => s.body)],
    );
    return result.rowCount ?? 0;
  }

  /**
   * Claims due deliveries for attempts: at most `limit` in all, and no more of a workspace or an
   * endpoint than it has free slots (none of the `busy` ones, which have none). Marks them attempted,
   * counts the attempt and logs its start.
   */
  async claim(limit: number, slots: Slots, leaseMs: number): Promise<ClaimedDelivery[]> {
    const { rows: due } = await this.pg.query<{ id: string; endpoint_id: string; workspace_id: string }>(
      `SELECT id, endpoint_id, workspace_id FROM webhook_deliveries
        WHERE next_attempt_at <= now() AND NOT (endpoint_id = ANY($1::uuid[])) AND NOT (workspace_id = ANY($2::uuid[]))
        ORDER BY next_attempt_at LIMIT 500`,
      [slots.busyEndpoints, slots.busyWorkspaces],
    );
    const byEndpoint = new Map<string, number>();
    const byWorkspace = new Map<string, number>();
    const ids: string[] = [];
    for (const d of due) {
      if (ids.length >= limit) break;
      const e = byEndpoint.get(d.endpoint_id) ?? 0;
      const w = byWorkspace.get(d.workspace_id) ?? 0;
      if (e >= slots.endpointFree(d.endpoint_id) || w >= slots.workspaceFree(d.workspace_id)) continue;
      byEndpoint.set(d.endpoint_id, e + 1);
      byWorkspace.set(d.workspace_id, w + 1);
      ids.push(d.id);
    }
    if (ids.length === 0) return [];
    const { rows } = await this.pg.query<ClaimedDelivery>(
      `WITH claimed AS (
         UPDATE webhook_deliveries d
            SET state = 'attempted', attempts = d.attempts + 1, next_attempt_at = NULL,
                lease_until = now() + make_interval(secs => $2::double precision / 1000), updated_at = date_trunc('milliseconds', now())
          WHERE d.id IN (SELECT id FROM webhook_deliveries WHERE id = ANY($1::uuid[]) AND next_attempt_at <= now() FOR UPDATE SKIP LOCKED)
          RETURNING d.id, d.endpoint_id, d.workspace_id, d.attempts, d.body),
       logged AS (
         INSERT INTO webhook_attempts (delivery_id, attempt, started_at) SELECT id, attempts, date_trunc('milliseconds', now()) FROM claimed)
       SELECT c.id, c.endpoint_id, c.workspace_id, c.attempts, c.body, e.url,
              array_remove(ARRAY[e.secret, CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret END], NULL) AS secrets
         FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id`,
      [ids, leaseMs],
    );
    return rows;
  }

  /** Records an attempt's result and moves the delivery on: acknowledged, permanently rejected, retried later or stopped. */
  async finish(delivery: ClaimedDelivery, result: AttemptResult): Promise<DeliveryState> {
    const state: DeliveryState =
      result.outcome === 'acknowledged' ? 'acknowledged'
      : result.outcome === 'rejected' ? 'permanently_rejected'
      : delivery.attempts >= MAX_ATTEMPTS ? 'stopped'
      : 'retried';
    const delayMs = state === 'retried' ? retryDelayMs(this.schedule, delivery.attempts) : null;
    // Only while the attempt is still ours: a lease that ran out was already counted as interrupted.
    await this.pg.query(
      `WITH moved AS (
         UPDATE webhook_deliveries
            SET state = $6, lease_until = NULL, updated_at = date_trunc('milliseconds', now()),
                next_attempt_at = CASE WHEN $7::double precision IS NULL THEN NULL ELSE now() + make_interval(secs => $7::double precision / 1000) END
          WHERE id = $1 AND state = 'attempted' AND attempts = $2
          RETURNING id)
       UPDATE webhook_attempts SET finished_at = date_trunc('milliseconds', now()), status_code = $3, outcome = $4, error = $5
        WHERE delivery_id = (SELECT id FROM moved) AND attempt = $2`,
      [delivery.id, delivery.attempts, result.statusCode, result.outcome, result.error?.slice(0, 500) ?? null, state, delayMs],
    );
    return state;
  }

  /** Attempts whose lease ran out (their dispatcher died mid-attempt) count as failed; the schedule goes on. */
  async recoverExpired(): Promise<number> {
    const { rows } = await this.pg.query<{ deliveries: string }>(
      `WITH expired AS (
         UPDATE webhook_deliveries
            SET state = CASE WHEN attempts >= $1 THEN 'stopped' ELSE 'retried' END,
                next_attempt_at = CASE WHEN attempts >= $1 THEN NULL
                                       ELSE now() + make_interval(secs => ($2::double precision[])[attempts] / 1000) END,
                lease_until = NULL, updated_at = date_trunc('milliseconds', now())
          WHERE id IN (SELECT id FROM webhook_deliveries WHERE state = 'attempted' AND lease_until < now() FOR UPDATE SKIP LOCKED)
          RETURNING id, attempts),
       logged AS (
         UPDATE webhook_attempts a SET finished_at = date_trunc('milliseconds', now()), outcome = 'interrupted', error = 'the dispatcher stopped during this attempt'
           FROM expired e WHERE a.delivery_id = e.id AND a.attempt = e.attempts AND a.finished_at IS NULL)
       SELECT count(*) AS deliveries FROM expired`,
      // The delay after each failed attempt, from the one definition of the schedule.
      [MAX_ATTEMPTS, Array.from({ length: MAX_ATTEMPTS }, (_, i) => retryDelayMs(this.schedule, i + 1))],
    );
    return Number(rows[0]?.deliveries ?? 0);
  }

  /** Deletes finished deliveries (with their attempts) last changed more than `days` ago, a batch at a time; how many. */
  async purgeFinished(days: number, batches = 20, batchSize = 1000): Promise<number> {
    let purged = 0;
    for (let i = 0; i < batches; i++) {
      const { rowCount } = await this.pg.query(
        `DELETE FROM webhook_deliveries WHERE id IN (
           SELECT id FROM webhook_deliveries
            WHERE state IN ('acknowledged', 'permanently_rejected', 'stopped') AND updated_at < now() - make_interval(days => $1)
            LIMIT $2)`,
        [days, batchSize],
      );
      purged += rowCount ?? 0;
      if ((rowCount ?? 0) < batchSize) break;
    }
    return purged;
  }

  /** Queues a new delivery of an earlier delivery's event (same body, fresh attempts). */
  async redeliver(endpointId: string, deliveryId: string): Promise<string | undefined> {
    const { rows } = await this.pg.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (id, endpoint_id, workspace_id, event_type, scan_id, body, state, next_attempt_at, redelivery_of)
       SELECT gen_random_uuid(), endpoint_id, workspace_id, event_type, scan_id, body, 'queued', now(), id
         FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2
       RETURNING id`,
      [deliveryId, endpointId],
    );
    return rows[0]?.id;
  }
}
