// The delivery log of a mail webhook, in Resend's shapes: the events sent to an
// endpoint (newest first, with their status), one event with its payload, and
// the attempts made to deliver it (every delivery of it, replays included).
import type { Pool } from '../../platform/postgres/pool.ts';
import type { DeliveryState } from '../../platform/webhooks/webhook-deliveries.ts';

/** Resend's status of an event, from the state of its latest delivery. */
const STATUS: Record<DeliveryState, 'success' | 'pending' | 'failed' | 'attempting'> = {
  queued: 'pending', retried: 'pending', attempted: 'attempting', acknowledged: 'success', permanently_rejected: 'failed', stopped: 'failed',
};

interface EventRow {
  id: string;
  event_type: string;
  state: DeliveryState;
  next_attempt_at: Date | null;
  body: string;
  created_at: Date;
}

/** Per event of the endpoint: its latest delivery's state, and when it was first queued. */
const EVENTS = `
  SELECT * FROM (
    SELECT DISTINCT ON (d.event_id) d.event_id AS id, d.event_type, d.state, d.next_attempt_at, d.body,
           min(d.created_at) OVER (PARTITION BY d.event_id) AS created_at
      FROM mail_webhook_deliveries d WHERE d.endpoint_id = $1
     ORDER BY d.event_id, d.created_at DESC, d.id DESC) ev`;

export interface ListQuery {
  limit?: number;
  /** Resend's cursor: the id of the last item of the previous page. */
  after?: string;
}

export class MailWebhookLog {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  async events(endpointId: string, query: ListQuery) {
    const limit = query.limit ?? 20;
    const { rows } = await this.pg.query<EventRow>(
      `WITH ev AS (${EVENTS})
       SELECT * FROM ev
        WHERE $2::uuid IS NULL OR (created_at, id) < (SELECT created_at, id FROM ev WHERE id = $2::uuid)
        ORDER BY created_at DESC, id DESC LIMIT $3`,
      [endpointId, query.after ?? null, limit + 1],
    );
    return {
      object: 'list' as const,
      has_more: rows.length > limit,
      data: rows.slice(0, limit).map((r) => ({ id: r.id, type: r.event_type, created_at: r.created_at.toISOString(), status: STATUS[r.state] })),
    };
  }

  async event(endpointId: string, eventId: string) {
    const { rows } = await this.pg.query<EventRow>(`WITH ev AS (${EVENTS}) SELECT * FROM ev WHERE id = $2::uuid`, [endpointId, eventId]);
    const row = rows[0];
    if (!row) return undefined;
    return {
      object: 'webhook_event' as const,
      id: row.id,
      type: row.event_type,
      created_at: row.created_at.toISOString(),
      status: STATUS[row.state],
      next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
      payload: JSON.parse(row.body) as unknown,
    };
  }

  /** The attempts at delivering the event, newest first; undefined when the endpoint never had it. */
  async attempts(endpointId: string, eventId: string, query: ListQuery) {
    const limit = query.limit ?? 20;
    const { rows } = await this.pg.query<{ delivery_id: string; attempt: number; started_at: Date; finished_at: Date | null; status_code: number | null; outcome: string | null; error: string | null; known: boolean }>(
      `SELECT a.*, true AS known FROM mail_webhook_attempts a JOIN mail_webhook_deliveries d ON d.id = a.delivery_id
        WHERE d.endpoint_id = $1 AND d.event_id = $2::uuid
        ORDER BY a.started_at DESC, a.attempt DESC`,
      [endpointId, eventId],
    );
    if (rows.length === 0 && !(await this.event(endpointId, eventId))) return undefined;
    const all = rows.map((a) => ({
      id: `${a.delivery_id}.${a.attempt}`,
      http_status_code: a.status_code,
      response: a.error ?? (a.outcome ?? 'in flight'),
      sent_at: a.started_at.toISOString(),
      finished_at: a.finished_at?.toISOString() ?? null,
      outcome: a.outcome,
    }));
    const from = query.after ? all.findIndex((a) => a.id === query.after) + 1 : 0;
    const page = all.slice(from, from + limit);
    return { object: 'list' as const, has_more: from + limit < all.length, data: page };
  }
}
