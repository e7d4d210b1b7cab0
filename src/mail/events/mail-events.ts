// Mail events (migrations 015, 027): recorded in Postgres, where the broadcast
// report counts those about its messages, and published to mail.events through their outbox (RowOutbox),
// by the process that recorded them or else by the relay of any ingress.
import type { PoolClient } from 'pg';
import { bestEffort } from '../../platform/background.ts';
import type { Publisher } from '../../platform/kafka/publisher.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Outbox } from '../../platform/outbox/outbox.ts';
import { RowOutbox } from '../../platform/outbox/row-outbox.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { mailEventsTopic } from '../../../topics/mail-events.ts';

export type MailEventType =
  | 'delivered' | 'bounced' | 'complained' | 'opened' | 'clicked' | 'unsubscribed'
  | 'scheduled' | 'delivery_delayed' | 'failed' | 'suppressed'
  | 'contact.created' | 'contact.updated' | 'contact.deleted' | 'broadcast.sent';

/** About a message (message_id), or else a contact (contact_id) or a broadcast (broadcast_id) with its snapshot in `data`. */
export interface NewMailEvent {
  organization_id: string;
  message_id?: string | null;
  contact_id?: string | null;
  broadcast_id?: string | null;
  data?: unknown;
  type: MailEventType;
  recipient?: string | null;
  url?: string | null;
  detail?: string | null;
  /** Set for an event that happens once: recording it again adds nothing. */
  once_key?: string | null;
  /** An open or click a machine made (tracking/automated-fetch.ts): kept, not counted in reports. */
  automated?: boolean;
}

interface EventRow {
  id: string;
  organization_id: string;
  message_id: string | null;
  contact_id: string | null;
  broadcast_id: string | null;
  data: unknown;
  type: MailEventType;
  recipient: string | null;
  url: string | null;
  detail: string | null;
  occurred_at: Date;
}

const RECORD = `
WITH e AS (
  INSERT INTO mail_events (organization_id, message_id, type, recipient, url, detail, once_key, automated, contact_id, broadcast_id, data)
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::boolean[], $9::uuid[], $10::uuid[], $11::jsonb[])
  ON CONFLICT (once_key) DO NOTHING
  RETURNING id, occurred_at
), queued AS (
  INSERT INTO mail_event_outbox (event_id, created_at) SELECT id, occurred_at FROM e
)
SELECT id FROM e`;

/** Records events (with their outbox rows) in the caller's transaction or on the pool; returns the ids of those new. */
export async function recordEvents(db: Pool | PoolClient, events: readonly NewMailEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const column = <K extends keyof NewMailEvent>(k: K) => events.map((e) => e[k] ?? null);
  const { rows } = await db.query<{ id: string }>(RECORD, [
    column('organization_id'), column('message_id'), column('type'), column('recipient'), column('url'), column('detail'), column('once_key'),
    events.map((e) => e.automated ?? false), column('contact_id'), column('broadcast_id'),
    events.map((e) => (e.data === undefined || e.data === null ? null : JSON.stringify(e.data))),
  ]);
  return rows.map((r) => r.id);
}

/** How long a caller waits for its events' publication before going on (the relay takes over). */
const PUBLISH_WAIT_MS = 2000;

export class MailEventOutbox {
  private readonly log: Logger;
  private readonly rows: RowOutbox<EventRow>;

  /** `pool` commits without waiting for the disk (row-outbox.ts). */
  constructor(pool: Pool, publisher: Publisher, log: Logger) {
    this.log = log;
    this.rows = new RowOutbox<EventRow>(pool, {
      name: mailEventsTopic.name,
      table: 'mail_event_outbox',
      idColumn: 'event_id',
      readItems: 'SELECT * FROM mail_events WHERE id = ANY($1::uuid[]) ORDER BY occurred_at',
      send: (rows) => publisher.publish(mailEventsTopic, rows.map((r) => ({
        key: r.organization_id,
        value: {
          event_id: r.id, organization_id: r.organization_id, message_id: r.message_id, type: r.type, recipient: r.recipient, url: r.url, detail: r.detail, occurred_at: r.occurred_at.getTime(),
          contact_id: r.contact_id, broadcast_id: r.broadcast_id, data: r.data === null ? null : JSON.stringify(r.data),
        },
      }))),
    }, log);
  }

  get outbox(): Outbox {
    return this.rows.outbox;
  }

  /** Publishes recorded events soon; a failure is logged and left to the relay. */
  async publish(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await bestEffort(this.rows.publishSoon(ids), PUBLISH_WAIT_MS, (err) => this.log.warn({ err }, 'mail event publish failed; the relay will retry'));
  }
}
