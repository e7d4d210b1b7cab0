// GET /emails: an organization's messages newest first, paged as Resend pages
// (what the `resend` SDK sends): `limit` (1..100, default 20), and `after` or
// `before` naming a message id of a previous page. `after` gives the messages
// older than it, `before` the newer ones nearest to it, both newest first;
// `has_more` says whether more lie beyond in that direction. The cursor is the
// message itself, compared in SQL by (created_at, id) as Postgres keeps them
// (to the microsecond), so messages written in one statement are each seen once.
import type { Pool } from '../../platform/postgres/pool.ts';
import { isUuid } from '../../platform/http/validation.ts';
import { STATE_COLUMNS, type MessageRow } from './messages.ts';

export interface ListRequest {
  organizationId: string;
  /** A domain-restricted key's domains: it lists only their messages. */
  domains: string[] | null;
  limit: number;
  after?: string;
  before?: string;
}

export type ListedRow = Pick<MessageRow, 'id' | 'from_address' | 'to_addresses' | 'cc_addresses' | 'bcc_addresses' | 'reply_to' | 'subject' | 'topic_id' | 'status' | 'scheduled_at' | 'created_at' | 'delivery_state' | 'report'>;

/** A page that cannot be listed: both cursors given, or one that names no message of this list. */
export type ListRefusal = { reason: 'both_cursors' } | { reason: 'unknown_cursor'; param: 'after' | 'before' };

export type ListResult = { ok: true; rows: ListedRow[]; more: boolean } | { ok: false; refusal: ListRefusal };

/** One page of the organization's messages, newest first, and whether more lie beyond it. */
export async function listMessages(pg: Pool, request: ListRequest): Promise<ListResult> {
  const { organizationId, domains, limit, after, before } = request;
  if (after !== undefined && before !== undefined) return { ok: false, refusal: { reason: 'both_cursors' } };
  const param = after !== undefined ? 'after' : before !== undefined ? 'before' : undefined;
  const cursor = after ?? before;
  const params: unknown[] = [organizationId, domains];
  let where = 'm.organization_id = $1 AND ($2::text[] IS NULL OR m.from_domain = ANY($2))';
  if (param && cursor !== undefined) {
    const { rows } = isUuid(cursor)
      ? await pg.query('SELECT 1 FROM mail_messages WHERE organization_id = $1 AND id = $2 AND ($3::text[] IS NULL OR from_domain = ANY($3))', [organizationId, cursor, domains])
      : { rows: [] };
    if (rows.length === 0) return { ok: false, refusal: { reason: 'unknown_cursor', param } };
    params.push(cursor);
    where += ` AND (m.created_at, m.id) ${param === 'after' ? '<' : '>'} (SELECT c.created_at, c.id FROM mail_messages c WHERE c.id = $3)`;
  }
  // `before` walks towards the newest: nearest first, then turned round.
  const order = param === 'before' ? 'ASC' : 'DESC';
  params.push(limit + 1);
  const { rows } = await pg.query<ListedRow>(
    `SELECT m.id, m.from_address, m.to_addresses, m.cc_addresses, m.bcc_addresses, m.reply_to, m.subject, m.topic_id, m.status, m.scheduled_at, m.created_at, ${STATE_COLUMNS}
       FROM mail_messages m LEFT JOIN mail_deliveries d ON d.message_id = m.id
      WHERE ${where}
      ORDER BY m.created_at ${order}, m.id ${order} LIMIT $${params.length}`,
    params,
  );
  const more = rows.length > limit;
  const shown = rows.slice(0, limit);
  return { ok: true, rows: param === 'before' ? shown.reverse() : shown, more };
}
