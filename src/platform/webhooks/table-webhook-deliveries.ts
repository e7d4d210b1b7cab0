// Webhook deliveries and their state machine, in Postgres, over
// a product's own tables (endpoints, deliveries, attempts; see migration 006
// for their shape). A delivery is written (queued) before its first attempt;
// each attempt is claimed with a lease and logged before the request goes out,
// and its result sets the next state and, for a retry, the time of the next
// attempt. A dispatcher killed mid-attempt leaves a lease that runs out; the
// attempt then counts as failed ("interrupted") and the schedule goes on.
// Endpoints' secrets are stored sealed; a claimed delivery carries them opened.
import type { PoolClient } from 'pg';
import { withTransaction, type Pool } from '../postgres/pool.ts';
import type { SealedSecrets } from '../secrets/sealed-secrets.ts';
import type { AttemptResult, ClaimedDelivery, WebhookDeliveries, DeliveryState, RetryPolicy, Slots } from './webhook-deliveries.ts';

/** A product's delivery tables. Names come from code, never from input. */
export interface DeliveryTables {
  endpoints: string;
  deliveries: string;
  attempts: string;
  /** The deliveries' column naming the tenant (workspace_id, organization_id). */
  ownerColumn: string;
  /** The deliveries' column naming the event (scan_id, event_id). */
  eventColumn: string;
}

export class TableWebhookDeliveries implements WebhookDeliveries {
  protected readonly pg: Pool;
  protected readonly tables: DeliveryTables;
  protected readonly retry: RetryPolicy;
  protected readonly secrets: SealedSecrets;

  constructor(pg: Pool, tables: DeliveryTables, retry: RetryPolicy, secrets: SealedSecrets) {
    this.pg = pg;
    this.tables = tables;
    this.retry = retry;
    this.secrets = secrets;
  }

  /**
   * Claims due deliveries for attempts: at most `limit` in all, and no more of an owner or an
   * endpoint than it has free slots (none of the `busy` ones, which have none). Marks them attempted,
   * counts the attempt and logs its start.
   */
  async claim(limit: number, slots: Slots, leaseMs: number): Promise<ClaimedDelivery[]> {
    const { deliveries, attempts, endpoints, ownerColumn, eventColumn } = this.tables;
    const { rows: due } = await this.pg.query<{ id: string; endpoint_id: string; owner_id: string }>(
      `SELECT id, endpoint_id, ${ownerColumn} AS owner_id FROM ${deliveries}
        WHERE next_attempt_at <= now() AND NOT (endpoint_id = ANY($1::uuid[])) AND NOT (${ownerColumn} = ANY($2::uuid[]))
        ORDER BY next_attempt_at LIMIT 500`,
      [slots.busyEndpoints, slots.busyOwners],
    );
    const byEndpoint = new Map<string, number>();
    const byOwner = new Map<string, number>();
    const ids: string[] = [];
    for (const d of due) {
      if (ids.length >= limit) break;
      const e = byEndpoint.get(d.endpoint_id) ?? 0;
      const o = byOwner.get(d.owner_id) ?? 0;
      if (e >= slots.endpointFree(d.endpoint_id) || o >= slots.ownerFree(d.owner_id)) continue;
      byEndpoint.set(d.endpoint_id, e + 1);
      byOwner.set(d.owner_id, o + 1);
      ids.push(d.id);
    }
    if (ids.length === 0) return [];
    const { rows } = await this.pg.query<ClaimedDelivery>(
      `WITH claimed AS (
         UPDATE ${deliveries} d
            SET state = 'attempted', attempts = d.attempts + 1, next_attempt_at = NULL,
                lease_until = now() + make_interval(secs => $2::double precision / 1000), updated_at = date_trunc('milliseconds', now())
          WHERE d.id IN (SELECT id FROM ${deliveries} WHERE id = ANY($1::uuid[]) AND next_attempt_at <= now() FOR UPDATE SKIP LOCKED)
          RETURNING d.id, d.endpoint_id, d.${ownerColumn} AS owner_id, d.event_type, d.${eventColumn}::text AS event_id, d.attempts, d.body),
       logged AS (
         INSERT INTO ${attempts} (delivery_id, attempt, started_at) SELECT id, attempts, date_trunc('milliseconds', now()) FROM claimed)
       SELECT c.id, c.endpoint_id, c.owner_id, c.event_type, c.event_id, c.attempts, c.body, e.url,
              array_remove(ARRAY[e.secret, CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret END], NULL) AS secrets
         FROM claimed c JOIN ${endpoints} e ON e.id = c.endpoint_id`,
      [ids, leaseMs],
    );
    // Both are the endpoint's `secret` (a rotation copies it into previous_secret), bound as such.
    return rows.map((row) => ({ ...row, secrets: row.secrets.map((s) => this.secrets.open(s, { table: endpoints, column: 'secret', id: row.endpoint_id })) }));
  }

  /** Records an attempt's result and moves the delivery on: acknowledged, permanently rejected, retried later or stopped. */
  async finish(delivery: ClaimedDelivery, result: AttemptResult): Promise<DeliveryState> {
    const { deliveries, attempts } = this.tables;
    const state: DeliveryState =
      result.outcome === 'acknowledged' ? 'acknowledged'
      : result.outcome === 'rejected' ? 'permanently_rejected'
      : delivery.attempts >= this.retry.maxAttempts ? 'stopped'
      : 'retried';
    const delayMs = state === 'retried' ? this.retry.delayMs(delivery.attempts) : null;
    // Only while the attempt is still ours: a lease that ran out was already counted as interrupted.
    await this.pg.query(
      `WITH moved AS (
         UPDATE ${deliveries}
            SET state = $6, lease_until = NULL, updated_at = date_trunc('milliseconds', now()),
                next_attempt_at = CASE WHEN $7::double precision IS NULL THEN NULL ELSE now() + make_interval(secs => $7::double precision / 1000) END
          WHERE id = $1 AND state = 'attempted' AND attempts = $2
          RETURNING id)
       UPDATE ${attempts} SET finished_at = date_trunc('milliseconds', now()), status_code = $3, outcome = $4, error = $5
        WHERE delivery_id = (SELECT id FROM moved) AND attempt = $2`,
      [delivery.id, delivery.attempts, result.statusCode, result.outcome, result.error?.slice(0, 500) ?? null, state, delayMs],
    );
    return state;
  }

  /** Attempts whose lease ran out (their dispatcher died mid-attempt) count as failed; the schedule goes on. */
  async recoverExpired(): Promise<number> {
    const { deliveries, attempts } = this.tables;
    const { maxAttempts } = this.retry;
    const { rows } = await this.pg.query<{ deliveries: string }>(
      `WITH expired AS (
         UPDATE ${deliveries}
            SET state = CASE WHEN attempts >= $1 THEN 'stopped' ELSE 'retried' END,
                next_attempt_at = CASE WHEN attempts >= $1 THEN NULL
                                       ELSE now() + make_interval(secs => ($2::double precision[])[attempts] / 1000) END,
                lease_until = NULL, updated_at = date_trunc('milliseconds', now())
          WHERE id IN (SELECT id FROM ${deliveries} WHERE state = 'attempted' AND lease_until < now() FOR UPDATE SKIP LOCKED)
          RETURNING id, attempts),
       logged AS (
         UPDATE ${attempts} a SET finished_at = date_trunc('milliseconds', now()), outcome = 'interrupted', error = 'the dispatcher stopped during this attempt'
           FROM expired e WHERE a.delivery_id = e.id AND a.attempt = e.attempts AND a.finished_at IS NULL)
       SELECT count(*) AS deliveries FROM expired`,
      // The delay after each failed attempt, from the one definition of the schedule.
      [maxAttempts, Array.from({ length: maxAttempts }, (_, i) => this.retry.delayMs(i + 1))],
    );
    return Number(rows[0]?.deliveries ?? 0);
  }

  /** Deletes finished deliveries (with their attempts) last changed more than `days` ago, a batch at a time; how many. */
  async purgeFinished(days: number, batches = 20, batchSize = 1000): Promise<number> {
    const { deliveries } = this.tables;
    let purged = 0;
    for (let i = 0; i < batches; i++) {
      const { rowCount } = await this.pg.query(
        `DELETE FROM ${deliveries} WHERE id IN (
           SELECT id FROM ${deliveries}
            WHERE state IN ('acknowledged', 'permanently_rejected', 'stopped') AND updated_at < now() - make_interval(days => $1)
            LIMIT $2)`,
        [days, batchSize],
      );
      purged += rowCount ?? 0;
      if ((rowCount ?? 0) < batchSize) break;
    }
    return purged;
  }

  /** Queues a new delivery of an earlier delivery's event (same body and event id, fresh attempts); its id. */
  async redeliver(endpointId: string, deliveryId: string, db: Pool | PoolClient = this.pg): Promise<string | undefined> {
    const { deliveries, ownerColumn, eventColumn } = this.tables;
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO ${deliveries} (id, endpoint_id, ${ownerColumn}, event_type, ${eventColumn}, body, state, next_attempt_at, redelivery_of)
       SELECT gen_random_uuid(), endpoint_id, ${ownerColumn}, event_type, ${eventColumn}, body, 'queued', now(), id
         FROM ${deliveries} WHERE id = $1 AND endpoint_id = $2
       RETURNING id`,
      [deliveryId, endpointId],
    );
    return rows[0]?.id;
  }

  /**
   * redeliver, and `read` of the new delivery in the same transaction: it is read as created (queued),
   * before a dispatcher can claim it; read after the commit it may be attempted already.
   */
  async redeliverAndRead<T>(endpointId: string, deliveryId: string, read: (db: PoolClient, id: string) => Promise<T>): Promise<T | undefined> {
    return withTransaction(this.pg, async (client) => {
      const id = await this.redeliver(endpointId, deliveryId, client);
      return id === undefined ? undefined : read(client, id);
    });
  }
}
