// Publishes stored messages to `mail.messages`: the outbox of the messages table.
// A message is published by the request that stored it (or by a replay of its key,
// spec Idempotency 4), and whatever a crash or a Kafka outage left unpublished by
// the relay. Messages to publish wait in mail_message_outbox (written with the
// message). A publisher takes a lease on their rows (30 s), sends them, then deletes
// the rows: a request, a replay and the relay never publish one message at once, no
// database connection is held across the Kafka send, and the rows of a publisher that
// died are relayed once its lease has run out. A crash after the send and before the
// delete publishes a message again (at-least-once: the sender dedupes by message_id).
// Messages of requests arriving together go in one send.
import { bestEffort } from '../../platform/background.ts';
import type { Publisher } from '../../platform/kafka/publisher.ts';
import type { Logger } from '../../platform/logger.ts';
import { outboxRelay } from '../../platform/outbox/outbox-relay.ts';
import type { Outbox } from '../../platform/outbox/outbox.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { mailMessagesTopic } from '../../../topics/mail-messages.ts';
import type { MessageRow } from './messages.ts';

/** The Avro value of mail.messages (schemas/mail-message.avsc). */
export interface MailMessageEvent {
  message_id: string;
  organization_id: string;
  kind: string;
  idempotency_key: string | null;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  tags: Record<string, string>;
  topic_id: string | null;
  suppressed: string[];
  recipient_count: number;
  attachments: { filename: string; content_type: string | null; content_id: string | null; size: number }[];
  scheduled_at: number | null;
  created_at: number;
}

export const toMessageEvent = (r: MessageRow): MailMessageEvent => ({
  message_id: r.id,
  organization_id: r.organization_id,
  kind: r.kind,
  idempotency_key: r.idempotency_key,
  from: r.from_address,
  to: r.to_addresses,
  cc: r.cc_addresses,
  bcc: r.bcc_addresses,
  reply_to: r.reply_to,
  subject: r.subject,
  html: r.html,
  text: r.text_body,
  headers: r.headers,
  tags: Object.fromEntries(r.tags.map((t) => [t.name, t.value])),
  topic_id: r.topic_id,
  suppressed: r.suppressed,
  recipient_count: r.recipient_count,
  attachments: r.attachments,
  scheduled_at: r.scheduled_at?.getTime() ?? null,
  created_at: r.created_at.getTime(),
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How long a publisher holds its rows before another may take them (far longer than a send takes). */
const LEASE_SECONDS = 30;

/**
 * Messages stored within this long are published together: one Kafka send and two outbox
 * statements for all of them. The answer to /emails does not wait for it (a replay does).
 */
const LINGER_MS = 10;

/** How long a request waits for its message's publication before answering anyway (the relay takes over). */
const PUBLISH_WAIT_MS = 2000;

export class MessageQueue {
  readonly outbox: Outbox;
  private pending: string[] = [];
  private waiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  private flushScheduled = false;

  constructor(
    private readonly pg: Pool,
    private readonly publisher: Publisher,
    private readonly log: Logger,
  ) {
    this.outbox = outboxRelay<string>(
      { name: mailMessagesTopic.name, pending: (ageMs, limit) => this.unpublished(ageMs, limit), publish: (ids) => this.publish(ids), idOf: (id) => id, batchSize: 100 },
      log,
    );
  }

  /** Publishes these stored messages soon (with those of other requests of this moment); a failure is logged and left to the relay. */
  async publishSoon(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const done = new Promise<void>((resolve, reject) => {
      this.pending.push(...ids);
      this.waiters.push({ resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setTimeout(() => this.flush(), LINGER_MS);
      }
    });
    await bestEffort(done, PUBLISH_WAIT_MS, (err) => this.log.warn({ err }, 'mail message publish failed; the relay will retry'));
  }

  private flush(): void {
    this.flushScheduled = false;
    const ids = this.pending;
    const waiters = this.waiters;
    this.pending = [];
    this.waiters = [];
    this.publish(ids).then(() => waiters.forEach((w) => w.resolve()), (err) => waiters.forEach((w) => w.reject(err)));
  }

  /** Publishes those of `ids` that are unpublished and not being published by someone else. */
  private async publish(ids: readonly string[]): Promise<void> {
    const rows = await this.inOutbox<MessageRow>(
      `WITH leased AS (
         UPDATE mail_message_outbox SET lease_until = now() + interval '${LEASE_SECONDS} seconds'
          WHERE message_id = ANY(%IDS%) AND (lease_until IS NULL OR lease_until < now()) RETURNING message_id)
       SELECT m.* FROM mail_messages m JOIN leased ON leased.message_id = m.id ORDER BY m.created_at`,
      ids,
    );
    if (rows.length === 0) return;
    const taken = rows.map((r) => r.id);
    try {
      await this.publisher.publish(mailMessagesTopic, rows.map((r) => ({ key: r.organization_id, value: toMessageEvent(r) })));
    } catch (err) {
      // Give the rows back at once: the relay (or a replay) need not wait for the lease.
      await this.inOutbox('UPDATE mail_message_outbox SET lease_until = NULL WHERE message_id = ANY(%IDS%)', taken).catch(() => {});
      throw err;
    }
    await this.inOutbox('DELETE FROM mail_message_outbox WHERE message_id = ANY(%IDS%)', taken);
  }

  /**
   * Runs one statement on the outbox in one round trip, committed without waiting for the disk
   * (synchronous_commit off): losing it in a crash only publishes a message again, which its
   * consumers dedupe. The ids are uuids read from or written by this service, checked again here.
   */
  private async inOutbox<R extends object = object>(statement: string, ids: readonly string[]): Promise<R[]> {
    for (const id of ids) if (!UUID.test(id)) throw new Error(`not a uuid: ${id}`);
    const results = (await this.pg.query(`BEGIN; SET LOCAL synchronous_commit TO off; ${statement.replace('%IDS%', `'{${ids.join(',')}}'::uuid[]`)}; COMMIT`)) as unknown as { rows: R[] }[];
    return results[2]!.rows;
  }

  /** Messages stored more than `ageMs` ago and still to publish (and not leased), oldest first. */
  private async unpublished(ageMs: number, limit: number): Promise<string[]> {
    const { rows } = await this.pg.query<{ message_id: string }>(
      `SELECT message_id FROM mail_message_outbox
        WHERE created_at < now() - make_interval(secs => $1::double precision / 1000) AND (lease_until IS NULL OR lease_until < now())
        ORDER BY created_at LIMIT $2`,
      [ageMs, limit],
    );
    return rows.map((r) => r.message_id);
  }
}
