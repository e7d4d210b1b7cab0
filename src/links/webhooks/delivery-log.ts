// Reads the delivery log of an endpoint: deliveries newest first, and one
// delivery with its attempts.
import type { PoolClient } from 'pg';
import type { Pool } from '../../platform/postgres/pool.ts';
import { decodeCursor, encodeCursor } from '../short-links/cursor.ts';
import type { DeliveryState, WebhookEvent } from './webhook-schemas.ts';

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_type: WebhookEvent;
  scan_id: string;
  state: DeliveryState;
  attempts: number;
  last_status: number | null;
  next_attempt_at: Date | null;
  redelivery_of: string | null;
  created_at: Date;
  updated_at: Date;
  body?: string;
}

interface AttemptRow {
  attempt: number;
  started_at: Date;
  finished_at: Date | null;
  status_code: number | null;
  outcome: 'acknowledged' | 'rejected' | 'failed' | 'interrupted' | null;
  error: string | null;
}

const COLUMNS = `d.id, d.endpoint_id, d.event_type, d.scan_id, d.state, d.attempts, d.next_attempt_at, d.redelivery_of, d.created_at, d.updated_at,
  (SELECT status_code FROM webhook_attempts a WHERE a.delivery_id = d.id ORDER BY attempt DESC LIMIT 1) AS last_status`;

function toDelivery(row: DeliveryRow) {
  return {
    object: 'webhook_delivery' as const,
    id: row.id,
    endpointId: row.endpoint_id,
    eventType: row.event_type,
    scanId: row.scan_id,
    eventId: row.scan_id,
    state: row.state,
    attempts: row.attempts,
    lastStatusCode: row.last_status,
    nextAttemptAt: row.next_attempt_at?.toISOString() ?? null,
    redeliveryOf: row.redelivery_of,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export class DeliveryLog {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  async list(endpointId: string, query: { state?: DeliveryState; limit?: number; cursor?: string }) {
    const limit = query.limit ?? 50;
    const after = query.cursor ? decodeCursor(query.cursor, 'createdAt', 'desc') : undefined;
    const { rows } = await this.pg.query<DeliveryRow>(
      `SELECT ${COLUMNS} FROM webhook_deliveries d
        WHERE d.endpoint_id = $1 AND ($2::text IS NULL OR d.state = $2)
          AND ($3::timestamptz IS NULL OR (d.created_at, d.id) < ($3, $4::uuid))
        ORDER BY d.created_at DESC, d.id DESC LIMIT $5`,
      [endpointId, query.state ?? null, after?.value ?? null, after?.id ?? null, limit + 1],
    );
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const nextCursor = rows.length > limit && last ? encodeCursor({ sort: 'createdAt', order: 'desc', value: last.created_at.toISOString(), id: last.id }) : null;
    return { object: 'list' as const, data: page.map(toDelivery), nextCursor };
  }

  /** One delivery with its attempts; `db` a transaction's client when it must see that transaction's rows. */
  async get(endpointId: string, deliveryId: string, db: Pool | PoolClient = this.pg) {
    const { rows } = await db.query<DeliveryRow>(`SELECT ${COLUMNS}, d.body FROM webhook_deliveries d WHERE d.endpoint_id = $1 AND d.id = $2`, [endpointId, deliveryId]);
    const row = rows[0];
    if (!row) return undefined;
    const attempts = await db.query<AttemptRow>('SELECT * FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt', [deliveryId]);
    return {
      ...toDelivery(row),
      payload: JSON.parse(row.body!) as unknown,
      attemptLog: attempts.rows.map((a) => ({
        attempt: a.attempt,
        startedAt: a.started_at.toISOString(),
        finishedAt: a.finished_at?.toISOString() ?? null,
        statusCode: a.status_code,
        outcome: a.outcome,
        error: a.error,
      })),
    };
  }
}
