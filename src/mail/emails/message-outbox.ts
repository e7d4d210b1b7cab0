// Publishes stored messages to `mail.messages`: the outbox of the messages table.
// A message is published by the request that stored it (or by a replay of its key,
// spec Idempotency 4), and whatever a crash or a Kafka outage left unpublished by
// the relay. Messages to publish wait in mail_message_outbox (written with the
// message); how they are taken, sent and deleted: platform/outbox/row-outbox.ts.
// A message may be published twice (a crash between send and commit): the sender
// dedupes by message_id.
import { bestEffort } from '../../platform/background.ts';
import type { Publisher } from '../../platform/kafka/publisher.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Outbox } from '../../platform/outbox/outbox.ts';
import { RowOutbox } from '../../platform/outbox/row-outbox.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { mailMessagesTopic } from '../../../topics/mail-messages.ts';
import { addressing, type MessageRow } from './messages.ts';

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
  ...addressing(r),
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

/** How long a request waits for its message's publication before answering anyway (the relay takes over). */
const PUBLISH_WAIT_MS = 2000;

export class MessageOutbox {
  private readonly log: Logger;
  private readonly rows: RowOutbox<MessageRow>;

  /** `pool` commits without waiting for the disk (row-outbox.ts). */
  constructor(
    pool: Pool,
    publisher: Publisher,
    log: Logger,
  ) {
    this.log = log;
    this.rows = new RowOutbox<MessageRow>(pool, {
      name: mailMessagesTopic.name,
      table: 'mail_message_outbox',
      idColumn: 'message_id',
      readItems: 'SELECT * FROM mail_messages WHERE id = ANY($1::uuid[]) ORDER BY created_at',
      send: (rows) => publisher.publish(mailMessagesTopic, rows.map((r) => ({ key: r.organization_id, value: toMessageEvent(r) }))),
    }, log);
  }

  get outbox(): Outbox {
    return this.rows.outbox;
  }

  /**
   * Publishes these stored messages, together with those of other requests of this moment. A
   * failure is logged and left to the relay. With `wait` (a replay), a message another
   * publisher holds is waited for, so that each is on the topic when this resolves.
   */
  async publish(ids: readonly string[], wait = false): Promise<void> {
    if (ids.length === 0) return;
    const publishing = wait ? this.rows.publish(ids, true) : this.rows.publishSoon(ids);
    await bestEffort(publishing, PUBLISH_WAIT_MS, (err) => this.log.warn({ err }, 'mail message publish failed; the relay will retry'));
  }
}
