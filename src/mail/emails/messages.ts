// Stored messages and their idempotency keys. A message is inserted with its key
// (unique per organization) in one statement, so of simultaneous requests with one
// key exactly one inserts and the others find its row; a key used again with
// another request is refused (409 invalid_idempotent_request), as Resend does.
import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { Coalescer } from '../../platform/coalescer.ts';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { isRefusedValue } from '../../platform/postgres/refused-value.ts';
import type { Attempt, SendState } from '../sending/send-queue.ts';
import type { PreparedMessage } from './prepare-message.ts';

/** canceled: by POST /emails/:id/cancel before it was handed over (message-changes.ts). */
export type MessageStatus = 'queued' | 'scheduled' | 'suppressed' | 'canceled';

export interface MessageRow {
  id: string;
  organization_id: string;
  key_id: string | null;
  idempotency_key: string | null;
  request_hash: Buffer | null;
  kind: string;
  from_address: string;
  from_domain: string;
  to_addresses: string[];
  cc_addresses: string[];
  bcc_addresses: string[];
  reply_to: string[];
  subject: string;
  html: string | null;
  text_body: string | null;
  headers: Record<string, string>;
  tags: { name: string; value: string }[];
  topic_id: string | null;
  suppressed: string[];
  recipient_count: number;
  attachments: { filename: string; content_type: string | null; content_id: string | null; size: number }[];
  status: MessageStatus;
  scheduled_at: Date | null;
  created_at: Date;
  /** What the sender made of it (GET only): null until the sender has queued it. */
  delivery_state?: SendState | null;
  attempts?: Attempt[];
  /** The verdict of the latest bounce or complaint report received about it (GET only). */
  report?: 'bounced' | 'complained' | null;
}

/** What storing one message came to. */
export interface Stored {
  id: string;
  /** The key was used before: this is the original message, nothing new was stored. */
  replayed: boolean;
  /** The message waits for its publication (not suppressed, not yet on the topic). */
  unpublished: boolean;
}

/** A stored message's sender, recipients and subject, named as both the API and the message events name them. */
export const addressing = (r: Pick<MessageRow, 'from_address' | 'to_addresses' | 'cc_addresses' | 'bcc_addresses' | 'reply_to' | 'subject'>) => ({
  from: r.from_address,
  to: r.to_addresses,
  cc: r.cc_addresses,
  bcc: r.bcc_addresses,
  reply_to: r.reply_to,
  subject: r.subject,
});

/** The idempotency key was used before with another request: nothing was stored. */
export interface KeyReused {
  reason: 'idempotency_key_reused';
}

export type StoreResult = { ok: true; stored: Stored } | { ok: false; refusal: KeyReused };

/** A strict batch with an item refused: nothing of it was stored. */
export type BatchResult = { ok: true; results: StoreResult[] } | { ok: false; index: number; refusal: KeyReused };

const keyReused: StoreResult = { ok: false, refusal: { reason: 'idempotency_key_reused' } };

/** Thrown inside a strict batch's transaction to roll it back. */
class BatchRolledBack extends Error {
  readonly index: number;

  constructor(index: number) {
    super('batch rolled back');
    this.index = index;
  }
}

// Messages are written by one statement for many (concurrent requests are gathered by a
// Coalescer, a batch's items go together): each row's suppressed recipients and what follows
// from them are worked out in the statement, which also puts a message to send into the outbox.
// Ids are made here, so that the rows the statement returns (a row whose key was used is not
// inserted) are told apart by id. Prepared per number of rows, so Postgres plans it once.
const COLUMNS = 21;
const CASTS = ['int', 'uuid', 'uuid', 'uuid', 'text', 'bytea', 'text', 'text', 'text[]', 'text[]', 'text[]', 'text[]', 'text', 'text', 'text', 'jsonb', 'jsonb', 'text', 'text[]', 'jsonb', 'timestamptz'];

function insertStatement(rows: number): string {
  const values = Array.from({ length: rows }, (_, r) => `(${CASTS.map((cast, c) => `$${r * COLUMNS + c + 1}::${cast}`).join(', ')})`).join(',\n    ');
  return `
WITH input (n, id, organization_id, key_id, idempotency_key, request_hash, from_address, from_domain, to_addresses, cc_addresses, bcc_addresses,
            reply_to, subject, html, text_body, headers, tags, topic_id, recipients, attachments, scheduled_at) AS (
  VALUES ${values}
), m AS (
  INSERT INTO mail_messages (id, organization_id, key_id, idempotency_key, request_hash, from_address, from_domain, to_addresses, cc_addresses,
    bcc_addresses, reply_to, subject, html, text_body, headers, tags, topic_id, suppressed, recipient_count, attachments, status, scheduled_at, created_at)
  SELECT i.id, i.organization_id, i.key_id, i.idempotency_key, i.request_hash, i.from_address, i.from_domain, i.to_addresses, i.cc_addresses,
         i.bcc_addresses, i.reply_to, i.subject, i.html, i.text_body, i.headers, i.tags, i.topic_id, s.list,
         cardinality(i.recipients) - cardinality(s.list), i.attachments,
         CASE WHEN cardinality(i.recipients) = cardinality(s.list) THEN 'suppressed' WHEN i.scheduled_at > now() THEN 'scheduled' ELSE 'queued' END, i.scheduled_at,
         clock_timestamp()
    FROM input i
    CROSS JOIN LATERAL (SELECT ARRAY(SELECT r FROM unnest(i.recipients) WITH ORDINALITY AS u(r, k)
                        WHERE EXISTS (SELECT 1 FROM mail_suppressions x WHERE x.organization_id = i.organization_id AND x.email = u.r) ORDER BY u.k) AS list) s
   -- Rows in the order given, each stamped as it is written: a batch's messages keep their order (the sender's order).
   ORDER BY i.n
  ON CONFLICT (organization_id, idempotency_key) DO NOTHING
  RETURNING id, organization_id, status, suppressed, created_at
), queued AS (
  INSERT INTO mail_message_outbox (message_id, created_at) SELECT id, created_at FROM m WHERE status <> 'suppressed'
), events AS (
  -- email.scheduled and email.suppressed (every recipient suppressed), with the message; the outbox relay publishes them.
  INSERT INTO mail_events (organization_id, message_id, type, detail, once_key, occurred_at)
  SELECT organization_id, id, status,
         CASE WHEN status = 'suppressed' THEN left('Not sent: every recipient is on the suppression list (' || array_to_string(suppressed, ', ') || ')', 500) END,
         status || ':' || id, created_at
    FROM m WHERE status IN ('scheduled', 'suppressed')
  RETURNING id, occurred_at
), event_outbox AS (
  INSERT INTO mail_event_outbox (event_id, created_at) SELECT id, occurred_at FROM events
)
SELECT id, status FROM m`;
}

/**
 * What GET /emails/:id and GET /emails tell a message's last event from, of `m` (mail_messages) and
 * `d` (its mail_deliveries row, left-joined): the queue's state and the latest report's verdict.
 */
export const STATE_COLUMNS = `d.state AS delivery_state,
  (SELECT e.type FROM mail_events e WHERE e.message_id = m.id AND e.type IN ('bounced', 'complained') AND e.once_key LIKE '%-report:%'
    ORDER BY e.occurred_at DESC LIMIT 1) AS report`;

/** The most messages one statement writes (a batch's 100). */
const MAX_ROWS = 100;

type Queryable = Pool | PoolClient;

interface ToStore {
  organizationId: string;
  /** The API key that sent it; null for the service's own messages (automation steps). */
  keyId: string | null;
  message: PreparedMessage;
}

/** What a fan-out batch's messages share: the sender, their kind, topic and tags. */
export interface FanOutSender {
  organizationId: string;
  kind: string;
  fromAddress: string;
  fromDomain: string;
  replyTo: string[];
  tags: { name: string; value: string }[];
  topicId: string | null;
}

/** One message of a fan-out batch, to one recipient. */
export interface FanOutMessage {
  id: string;
  idempotencyKey: string;
  email: string;
  subject: string;
  html: string | null;
  text: string | null;
}

/**
 * Stores a fan-out batch's messages, queued with their outbox rows, by one statement in the
 * caller's transaction (the batch's). The caller bounds the batch's bytes and has left out
 * suppressed recipients.
 */
export async function storeFanOut(db: PoolClient, sender: FanOutSender, messages: readonly FanOutMessage[]): Promise<void> {
  if (messages.length === 0) return;
  const column = <K extends keyof FanOutMessage>(k: K) => messages.map((m) => m[k]);
  await db.query(
    `WITH t AS (SELECT * FROM unnest($5::uuid[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[]) AS t(id, idempotency_key, email, subject, html, text_body)),
          m AS (INSERT INTO mail_messages (id, organization_id, idempotency_key, kind, from_address, from_domain, to_addresses, reply_to, subject, html, text_body, tags, topic_id, recipient_count, status)
                SELECT t.id, $1, t.idempotency_key, $2, $3, $4, ARRAY[t.email], $11::text[], t.subject, t.html, t.text_body, $12::jsonb, $13, 1, 'queued' FROM t
                RETURNING id, created_at)
     INSERT INTO mail_message_outbox (message_id, created_at) SELECT id, created_at FROM m`,
    [sender.organizationId, sender.kind, sender.fromAddress, sender.fromDomain, column('id'), column('idempotencyKey'), column('email'), column('subject'),
      column('html'), column('text'), sender.replyTo, JSON.stringify(sender.tags), sender.topicId],
  );
}

export class Messages {
  readonly pg: Pool;
  private readonly together: Coalescer<ToStore, StoreResult>;
  private readonly statements = new Map<number, string>();

  /** The pool is shown so that the other readers and writers of messages share it (email-operations.ts). */
  constructor(pg: Pool) {
    this.pg = pg;
    // One statement for the batch: a value Postgres refuses fails it whole, having written nothing,
    // so the batch runs again row by row and only that request fails.
    this.together = new Coalescer((items) => this.storeAll(this.pg, items), MAX_ROWS, isRefusedValue);
  }

  /**
   * Stores one message without attachments in the caller's transaction, so that it is written
   * together with what it belongs to (an automation run's step).
   */
  async storeIn(db: PoolClient, organizationId: string, keyId: string | null, message: PreparedMessage): Promise<StoreResult> {
    const [result] = await this.storeAll(db, [{ organizationId, keyId, message }]);
    if (result!.status === 'rejected') throw result!.reason;
    return result!.value;
  }

  /**
   * Stores one message, leaving out recipients on the suppression list: with those of other
   * requests of this moment, or (with attachments) in a transaction of its own.
   */
  async store(organizationId: string, keyId: string, message: PreparedMessage): Promise<StoreResult> {
    if (message.attachments.length === 0) return this.together.call({ organizationId, keyId, message });
    return withTransaction(this.pg, async (client) => {
      const [result] = await this.storeAll(client, [{ organizationId, keyId, message }]);
      if (result!.status === 'rejected') throw result!.reason;
      if (!result!.value.ok) return result!.value;
      const stored = result!.value.stored;
      if (!stored.replayed) {
        for (const [position, a] of message.attachments.entries()) {
          await client.query('INSERT INTO mail_message_attachments (message_id, position, filename, content_type, content_id, content) VALUES ($1, $2, $3, $4, $5, $6)', [stored.id, position, a.filename, a.content_type, a.content_id, a.content]);
        }
      }
      return result!.value;
    });
  }

  /**
   * Stores a batch in one transaction, in order. A key used before with another request refuses
   * the whole batch, storing none of it (`strict`), or only that item.
   */
  async storeBatch(organizationId: string, keyId: string, messages: readonly PreparedMessage[], strict: boolean): Promise<BatchResult> {
    try {
      return await withTransaction(this.pg, async (client) => {
        const settled = await this.storeAll(client, messages.map((message) => ({ organizationId, keyId, message })));
        const results = settled.map((result) => {
          if (result.status === 'rejected') throw result.reason;
          return result.value;
        });
        const refused = results.findIndex((r) => !r.ok);
        if (strict && refused >= 0) throw new BatchRolledBack(refused);
        return { ok: true as const, results };
      });
    } catch (err) {
      if (err instanceof BatchRolledBack) return { ok: false, index: err.index, refusal: { reason: 'idempotency_key_reused' } };
      throw err;
    }
  }

  async get(organizationId: string, id: string, domains: string[] | null): Promise<MessageRow | undefined> {
    const { rows } = await this.pg.query<MessageRow>(
      `SELECT m.*, coalesce(d.attempts, '[]') AS attempts, ${STATE_COLUMNS}
         FROM mail_messages m LEFT JOIN mail_deliveries d ON d.message_id = m.id
        WHERE m.organization_id = $1 AND m.id = $2 AND ($3::text[] IS NULL OR m.from_domain = ANY($3))`,
      [organizationId, id, domains],
    );
    return rows[0];
  }

  /** Writes these messages with one statement; an item whose key was used is its original (a replay) or refused. */
  private async storeAll(db: Queryable, items: readonly ToStore[]): Promise<PromiseSettledResult<StoreResult>[]> {
    const ids = items.map(() => randomUUID());
    const values = items.flatMap(({ organizationId, keyId, message: m }, i) => {
      const attachments = m.attachments.map((a) => ({ filename: a.filename, content_type: a.content_type, content_id: a.content_id, size: a.content.length }));
      return [
        i, ids[i], organizationId, keyId, m.idempotencyKey, m.requestHash, m.from.name ? `${m.from.name} <${m.from.email}>` : m.from.email, m.from.domain,
        m.to, m.cc, m.bcc, m.reply_to, m.subject, m.html, m.text, JSON.stringify(m.headers), JSON.stringify(m.tags), m.topic_id,
        m.recipientKeys, JSON.stringify(attachments), m.scheduled_at,
      ];
    });
    const { rows } = await db.query<{ id: string; status: MessageStatus }>({ name: `mail_store_${items.length}`, text: this.statement(items.length), values });
    const inserted = new Map(rows.map((r) => [r.id, r.status]));
    return Promise.allSettled(items.map(async (item, i) => {
      const status = inserted.get(ids[i]!);
      if (status) return { ok: true as const, stored: { id: ids[i]!, replayed: false, unpublished: status !== 'suppressed' } };
      return (await this.original(db, item.organizationId, item.message.idempotencyKey!, item.message.requestHash))!;
    }));
  }

  /**
   * The message stored under `key`, if any: a replay when its request hashed to `requestHash`, else
   * refused (the same answer store() gives, asked before a message is made).
   */
  async earlier(organizationId: string, key: string, requestHash: Buffer): Promise<StoreResult | undefined> {
    return this.original(this.pg, organizationId, key, requestHash);
  }

  /** The message stored before under this key, if any: this very request before (a replay), or another one (refused). */
  private async original(db: Queryable, organizationId: string, key: string, requestHash: Buffer): Promise<StoreResult | undefined> {
    const { rows: found } = await db.query<{ id: string; request_hash: Buffer | null; unpublished: boolean }>(
      `SELECT m.id, m.request_hash, EXISTS (SELECT 1 FROM mail_message_outbox o WHERE o.message_id = m.id) AS unpublished
         FROM mail_messages m WHERE m.organization_id = $1 AND m.idempotency_key = $2`,
      [organizationId, key],
    );
    const original = found[0];
    if (!original) return undefined;
    if (!original.request_hash || !original.request_hash.equals(requestHash)) return keyReused;
    return { ok: true, stored: { id: original.id, replayed: true, unpublished: original.unpublished } };
  }

  private statement(rows: number): string {
    let text = this.statements.get(rows);
    if (!text) this.statements.set(rows, (text = insertStatement(rows)));
    return text;
  }
}
