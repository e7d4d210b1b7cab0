// Stored messages and their idempotency keys. A message is inserted with its key
// (unique per organization) in one statement, so of simultaneous requests with one
// key exactly one inserts and the others find its row; a key used again with
// another request is refused (409 invalid_idempotent_request), as Resend does.
import type { PoolClient } from 'pg';
import { ApiError } from '../../platform/http/errors.ts';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import type { PreparedMessage } from './prepare-message.ts';

export type MessageStatus = 'queued' | 'scheduled' | 'suppressed';

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
}

/** What storing one message came to. */
export interface Stored {
  id: string;
  /** The key was used before: this is the original message, nothing new was stored. */
  replayed: boolean;
  /** The message waits for its publication (not suppressed, not yet on the topic). */
  unpublished: boolean;
}

export const reusedKey = (at = '') =>
  new ApiError(409, 'invalid_idempotent_request', 'This idempotency key was used with a different request; use a new key for a new message.', [{ path: `${at}/idempotency_key`, message: 'used with another request' }]);

// The suppressed recipients ($17 lists them all, lower-cased) and what follows from them are
// worked out in the same statement, which also puts a message to send into the outbox: one
// round trip per message.
const INSERT = `
WITH m AS (
  INSERT INTO mail_messages (organization_id, key_id, idempotency_key, request_hash, from_address, from_domain, to_addresses, cc_addresses,
    bcc_addresses, reply_to, subject, html, text_body, headers, tags, topic_id, suppressed, recipient_count, attachments, status, scheduled_at)
  SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, s.list, cardinality($17::text[]) - cardinality(s.list), $18,
         CASE WHEN cardinality($17::text[]) = cardinality(s.list) THEN 'suppressed' WHEN $19::timestamptz > now() THEN 'scheduled' ELSE 'queued' END, $19
    FROM (SELECT ARRAY(SELECT r FROM unnest($17::text[]) WITH ORDINALITY AS u(r, n)
                        WHERE EXISTS (SELECT 1 FROM mail_suppressions x WHERE x.organization_id = $1 AND x.email = u.r) ORDER BY u.n) AS list) s
  ON CONFLICT (organization_id, idempotency_key) DO NOTHING
  RETURNING id, status, created_at
), queued AS (
  INSERT INTO mail_message_outbox (message_id, created_at) SELECT id, created_at FROM m WHERE status <> 'suppressed'
)
SELECT id, status FROM m`;

type Queryable = Pool | PoolClient;

export class Messages {
  constructor(private readonly pg: Pool) {}

  /** Stores one message (with its attachments, in one transaction), leaving out recipients on the suppression list. */
  async store(organizationId: string, keyId: string, message: PreparedMessage): Promise<Stored> {
    if (message.attachments.length === 0) return this.storeWith(this.pg, organizationId, keyId, message);
    return withTransaction(this.pg, (client) => this.storeWith(client, organizationId, keyId, message));
  }

  /**
   * Stores a batch in one transaction, in order. A key used before with another request refuses
   * the whole batch (`strict`) or only that item (its entry is the ApiError).
   */
  async storeBatch(organizationId: string, keyId: string, messages: readonly PreparedMessage[], strict: boolean): Promise<(Stored | ApiError)[]> {
    return withTransaction(this.pg, async (client) => {
      const results: (Stored | ApiError)[] = [];
      for (const [i, message] of messages.entries()) {
        try {
          results.push(await this.storeWith(client, organizationId, keyId, message));
        } catch (err) {
          if (!(err instanceof ApiError) || strict) throw err instanceof ApiError ? reusedKey(`/${i}`) : err;
          results.push(reusedKey(`/${i}`));
        }
      }
      return results;
    });
  }

  async get(organizationId: string, id: string, domains: string[] | null): Promise<MessageRow | undefined> {
    const { rows } = await this.pg.query<MessageRow>(
      'SELECT * FROM mail_messages WHERE organization_id = $1 AND id = $2 AND ($3::text[] IS NULL OR from_domain = ANY($3))',
      [organizationId, id, domains],
    );
    return rows[0];
  }

  private async storeWith(db: Queryable, organizationId: string, keyId: string, m: PreparedMessage): Promise<Stored> {
    const attachments = m.attachments.map((a) => ({ filename: a.filename, content_type: a.content_type, content_id: a.content_id, size: a.content.length }));
    const { rows } = await db.query<{ id: string; status: MessageStatus }>(INSERT, [
      organizationId, keyId, m.idempotencyKey, m.requestHash, m.from.name ? `${m.from.name} <${m.from.email}>` : m.from.email, m.from.domain,
      m.to, m.cc, m.bcc, m.reply_to, m.subject, m.html, m.text, JSON.stringify(m.headers), JSON.stringify(m.tags), m.topic_id,
      m.recipientKeys, JSON.stringify(attachments), m.scheduled_at,
    ]);
    const inserted = rows[0];
    if (inserted) {
      for (const [position, a] of m.attachments.entries()) {
        await db.query('INSERT INTO mail_message_attachments (message_id, position, filename, content_type, content_id, content) VALUES ($1, $2, $3, $4, $5, $6)', [inserted.id, position, a.filename, a.content_type, a.content_id, a.content]);
      }
      return { id: inserted.id, replayed: false, unpublished: inserted.status !== 'suppressed' };
    }
    // The key was used: by this very request before (a replay), or by another one.
    const { rows: found } = await db.query<{ id: string; request_hash: Buffer | null; unpublished: boolean }>(
      `SELECT m.id, m.request_hash, EXISTS (SELECT 1 FROM mail_message_outbox o WHERE o.message_id = m.id) AS unpublished
         FROM mail_messages m WHERE m.organization_id = $1 AND m.idempotency_key = $2`,
      [organizationId, m.idempotencyKey],
    );
    const original = found[0]!;
    if (!original.request_hash || !original.request_hash.equals(m.requestHash)) throw reusedKey();
    return { id: original.id, replayed: true, unpublished: original.unpublished };
  }
}
