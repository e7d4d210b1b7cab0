// The send queue in Postgres (table mail_deliveries, migration 014; the table keeps
// its name): which message goes out next,
// who holds it, and what became of each attempt. Order is kept per organization:
// an organization's next message is the first of its waiting ones (by the time
// it became sendable), and it has at most one message in hand at a time; a
// message waiting for a retry does not hold up the others.
import type { PoolClient } from 'pg';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { recordEvents, type NewMailEvent } from '../events/mail-events.ts';
import { recordVerdicts, type RecipientVerdict } from '../suppressions/recipient-verdicts.ts';
import { mailSends } from './send-metrics.ts';

/** canceled: POST /emails/:id/cancel took it out of the queue before a sender held it; no sender takes it. */
export type SendState = 'queued' | 'sending' | 'retrying' | 'sent' | 'bounced' | 'failed' | 'suppressed' | 'canceled';

/** One hand-over attempt, as GET /emails/:id shows it. */
export interface Attempt {
  attempt: number;
  at: string;
  /** skipped: not handed over, by the sender's own decision (every recipient left out, or a daily cap it can never fit). */
  outcome: 'delivered' | 'deferred' | 'bounced' | 'skipped';
  /** The relay's reply, or the transport error, or why it was skipped. */
  response: string;
}

/** What an outcome records with the delivery's new state, in its transaction. */
export interface Effects {
  event?: NewMailEvent;
  /** Recipients the relay refused (recipient-verdicts.ts: events and suppressions). */
  verdicts?: RecipientVerdict[];
}

export interface QueuedMessage {
  message_id: string;
  organization_id: string;
  from_domain: string;
  state: SendState;
  lease_token: string;
  /** Its place in the organization's queue: queued_at, accepted_at (microseconds since 1970, as text: a Date keeps only milliseconds), message_id. */
  queued_us: string;
  accepted_us: string;
  counted_day: string | null;
  attempts: Attempt[];
  /** Recipients whose copy the relay took already (a message sent as one copy per recipient). */
  handed_to: string[];
}

// Due messages among the first $3 waiting (queued or in flight) of each organization, in its
// queue order, heads of every organization first; and the retries that are due. The window lets
// one organization's backlog (a broadcast) fill every hand-over slot, while a message held back
// by an allowance holds back only the window behind it (which then waits too).
const DUE = `
WITH waiting AS (
  SELECT message_id, state, next_attempt_at, lease_until,
         row_number() OVER (PARTITION BY organization_id ORDER BY queued_at, accepted_at, message_id) AS place
    FROM mail_deliveries WHERE state IN ('queued', 'sending')
), due AS (
  (SELECT message_id FROM waiting WHERE place <= $3 AND next_attempt_at <= now() AND (state = 'queued' OR lease_until < now()) ORDER BY place LIMIT $1)
  UNION ALL
  (SELECT message_id FROM mail_deliveries WHERE state = 'retrying' AND next_attempt_at <= now() ORDER BY next_attempt_at LIMIT $1)
)
UPDATE mail_deliveries d
   SET state = 'sending', lease_until = now() + make_interval(secs => $2::double precision / 1000), lease_token = gen_random_uuid(), updated_at = now()
 WHERE d.message_id IN (SELECT message_id FROM due LIMIT $1)
   AND (d.state IN ('queued', 'retrying') OR (d.state = 'sending' AND d.lease_until < now()))
RETURNING d.message_id, d.organization_id, d.from_domain, d.state, d.lease_token,
          (extract(epoch FROM d.queued_at) * 1000000)::bigint AS queued_us, (extract(epoch FROM d.accepted_at) * 1000000)::bigint AS accepted_us, to_char(d.counted_day, 'YYYY-MM-DD') AS counted_day, d.attempts, d.handed_to`;

/** Messages of one organization that may be in flight at once, across senders. */
export const ORGANIZATION_WINDOW = 64;

export class SendQueue {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  /**
   * Queues the stored messages of these ids (a repeat is ignored); returns how many were new. A
   * canceled message is not queued: the share lock waits for a cancel or a reschedule of the
   * message under way (message-changes.ts), then reads the row as it left it.
   */
  async enqueue(messageIds: readonly string[]): Promise<number> {
    const { rowCount } = await this.pg.query(
      `INSERT INTO mail_deliveries (message_id, organization_id, from_domain, queued_at, accepted_at, state, next_attempt_at)
       SELECT id, organization_id, from_domain, coalesce(scheduled_at, created_at), created_at, 'queued', coalesce(scheduled_at, created_at)
         FROM mail_messages WHERE id = ANY($1::uuid[]) AND status IN ('queued', 'scheduled')
          FOR SHARE
       ON CONFLICT (message_id) DO NOTHING`,
      [messageIds],
    );
    return rowCount ?? 0;
  }

  /** Takes up to `limit` due messages under a lease of `leaseMs`. */
  async take(limit: number, leaseMs: number): Promise<QueuedMessage[]> {
    const { rows } = await this.pg.query<QueuedMessage>(DUE, [limit, leaseMs, ORGANIZATION_WINDOW]);
    return rows;
  }

  /** Records the day the message was counted against (in the caller's transaction, with the counting); false if the hold was lost. */
  async markCounted(db: PoolClient, d: QueuedMessage, day: string, emails: number): Promise<boolean> {
    const { rowCount } = await db.query(
      "UPDATE mail_deliveries SET counted_day = $3, counted = $4, updated_at = now() WHERE message_id = $1 AND lease_token = $2 AND state = 'sending'",
      [d.message_id, d.lease_token, day, emails],
    );
    return rowCount === 1;
  }

  /** Notes that the relay took the copy of these recipients, so that no later attempt sends it again. */
  async markHandedTo(d: QueuedMessage, recipients: readonly string[]): Promise<void> {
    await this.pg.query('UPDATE mail_deliveries SET handed_to = handed_to || $3::text[], updated_at = now() WHERE message_id = $1 AND lease_token = $2', [d.message_id, d.lease_token, recipients]);
    d.handed_to = [...d.handed_to, ...recipients];
  }

  /** Puts the message back to wait `delayMs` (a spent allowance), keeping its place in its organization's order. */
  async wait(d: QueuedMessage, delayMs: number): Promise<void> {
    await this.finish(this.pg, d, 'queued', delayMs);
  }

  /**
   * Records an attempt and the state it leads to (a retry waits `delayMs`), and with it the events
   * and suppressions it makes, in one transaction; returns the ids of the events recorded.
   */
  async record(d: QueuedMessage, state: SendState, attempt?: Attempt, delayMs = 0, effects: Effects = {}): Promise<string[]> {
    const { event, verdicts = [] } = effects;
    if (!event && verdicts.length === 0) {
      await this.finish(this.pg, d, state, delayMs, attempt);
      return [];
    }
    return withTransaction(this.pg, async (client) => {
      if (!(await this.finish(client, d, state, delayMs, attempt))) return [];
      return [...(event ? await recordEvents(client, [event]) : []), ...(await recordVerdicts(client, verdicts))];
    });
  }

  /** Ends the hold with this state; false when the hold was no longer ours. */
  private async finish(db: Pool | PoolClient, d: QueuedMessage, state: SendState, delayMs: number, attempt?: Attempt): Promise<boolean> {
    const { rowCount } = await db.query(
      `UPDATE mail_deliveries
          SET state = $3, lease_until = NULL, lease_token = NULL, updated_at = now(),
              next_attempt_at = now() + make_interval(secs => $4::double precision / 1000),
              attempts = attempts || $5::jsonb
        WHERE message_id = $1 AND lease_token = $2`,
      [d.message_id, d.lease_token, state, delayMs, JSON.stringify(attempt ? [attempt] : [])],
    );
    if (rowCount === 1) mailSends.inc({ outcome: state === 'queued' ? 'waiting' : state });
    return rowCount === 1;
  }
}
