// Cancel and reschedule of a stored message (POST /emails/:id/cancel, PATCH
// /emails/:id), each decided in one transaction that locks the message row,
// then its queue row: a sender takes a queue row under a lock (send-queue.ts),
// and the sender's queueing waits on the message row's lock, so a change and a
// hand-over never both win. A message may change while no sender holds it and
// the relay has taken none of it; after that the change is refused
// (MessageChangeRefusal, answered 409 by email-refusals.ts) and changes nothing.
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import type { PoolClient } from 'pg';
import type { SendState } from '../sending/send-queue.ts';
import type { MessageStatus } from './messages.ts';

interface Locked {
  status: MessageStatus;
  /** Its queue row's state, or null when the sender has not queued it yet. */
  state: SendState | null;
  /** Hand-overs tried, and recipients whose copy the relay took. */
  attempts: number;
  handed: number;
}

/** Why a cancel or reschedule was refused; `why` says what the message went through. */
export type MessageChangeRefusal = { reason: 'not_found' } | { reason: 'not_cancelable' | 'not_schedulable'; why: string };

export type MessageChangeResult = { ok: true } | { ok: false; refusal: MessageChangeRefusal };

const refuse = (refusal: MessageChangeRefusal): MessageChangeResult => ({ ok: false, refusal });

/** Locks the message (of the organization, on a domain the key sees), then its queue row; undefined when there is none. */
async function lock(db: PoolClient, organizationId: string, id: string, domains: string[] | null): Promise<Locked | undefined> {
  const { rows: [m] } = await db.query<{ status: MessageStatus }>(
    'SELECT status FROM mail_messages WHERE organization_id = $1 AND id = $2 AND ($3::text[] IS NULL OR from_domain = ANY($3)) FOR UPDATE',
    [organizationId, id, domains],
  );
  if (!m) return undefined;
  const { rows: [d] } = await db.query<{ state: SendState; attempts: number; handed: number }>(
    'SELECT state, jsonb_array_length(attempts) AS attempts, cardinality(handed_to) AS handed FROM mail_deliveries WHERE message_id = $1 FOR UPDATE',
    [id],
  );
  return { status: m.status, state: d?.state ?? null, attempts: d?.attempts ?? 0, handed: d?.handed ?? 0 };
}

/** Why a message in this state can no longer be canceled or rescheduled, or undefined. */
function handedOver(m: Locked): string | undefined {
  if (m.status === 'canceled') return 'is canceled already';
  if (m.status === 'suppressed') return 'went to nobody (every recipient is suppressed)';
  if (m.state === 'sending') return 'is being handed over to the relay right now';
  if (m.handed > 0) return 'was handed over to the relay for some of its recipients';
  if (m.state !== null && !['queued', 'retrying'].includes(m.state)) return `was handed over already (${m.state})`;
  return undefined;
}

export class MessageChanges {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  /** Cancels a message not yet handed over: it and its queue row become canceled, and no sender takes it. */
  async cancel(organizationId: string, id: string, domains: string[] | null): Promise<MessageChangeResult> {
    return withTransaction(this.pg, async (db) => {
      const m = await lock(db, organizationId, id, domains);
      if (!m) return refuse({ reason: 'not_found' });
      const why = handedOver(m);
      if (why) return refuse({ reason: 'not_cancelable', why });
      await db.query("UPDATE mail_messages SET status = 'canceled' WHERE id = $1", [id]);
      if (m.state !== null) {
        await db.query("UPDATE mail_deliveries SET state = 'canceled', lease_until = NULL, lease_token = NULL, updated_at = now() WHERE message_id = $1", [id]);
      }
      return { ok: true };
    });
  }

  /**
   * Moves a scheduled message that no sender has tried yet to `at` (a time past or now sends it at
   * once, as at creation); its place in its organization's queue moves with it.
   */
  async reschedule(organizationId: string, id: string, domains: string[] | null, at: Date): Promise<MessageChangeResult> {
    return withTransaction(this.pg, async (db) => {
      const m = await lock(db, organizationId, id, domains);
      if (!m) return refuse({ reason: 'not_found' });
      const why = handedOver(m) ?? (m.status !== 'scheduled' ? 'is not scheduled (sent without scheduled_at, or moved to a time past)' : m.attempts > 0 ? 'was tried already' : undefined);
      if (why) return refuse({ reason: 'not_schedulable', why });
      await db.query("UPDATE mail_messages SET scheduled_at = $2, status = CASE WHEN $2 > now() THEN 'scheduled' ELSE 'queued' END WHERE id = $1", [id, at]);
      if (m.state !== null) {
        await db.query('UPDATE mail_deliveries SET queued_at = $2, next_attempt_at = $2, updated_at = now() WHERE message_id = $1', [id, at]);
      }
      return { ok: true };
    });
  }
}
