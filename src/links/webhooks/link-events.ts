// Link events for webhooks (link.created, link.updated, link.deleted). Postgres
// records each change of a link in link_events, in the change's own transaction
// (a trigger, migration 027), while its workspace has an endpoint that wants it.
// When the links.changelog message of that version or a newer one is consumed,
// takeDue turns the link's recorded events into deliveries and deletes them, in
// one transaction: an event is delivered once per endpoint, whatever replays.
import type { Pool } from '../../platform/postgres/pool.ts';
import { withTransaction } from '../../platform/postgres/pool.ts';
import { isUuid } from '../../platform/http/validation.ts';
import { toLink, type LinkRow } from '../short-links/link-store.ts';

export const LINK_EVENTS = ['link.created', 'link.updated', 'link.deleted'] as const;
export type LinkEventType = (typeof LINK_EVENTS)[number];

interface LinkEventRow {
  id: string;
  workspace_id: string;
  event_type: LinkEventType;
  /** The links row after the change, as to_jsonb wrote it (times as ISO strings). */
  link: Record<string, unknown>;
  created_at: Date;
}

/** A links row read back from JSON: its time columns become Dates again, as the driver gives them. */
function rowFromJson(json: Record<string, unknown>): LinkRow {
  const row: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) {
    row[key] = typeof value === 'string' && /(_at|_from)$/.test(key) ? new Date(value) : value;
  }
  // The trigger keeps only whether the link has a password ('set'); a row without the key had none.
  row.password_hash = json.password_hash ?? null;
  return row as unknown as LinkRow;
}

/** The body of a link event: the event id at the top (the receiver's idempotency key) and the link as the API answers it. */
export function linkEventBody(event: { id: string; type: LinkEventType; createdAt: Date; link: LinkRow }, baseUrl: string): string {
  return JSON.stringify({ type: event.type, eventId: event.id, createdAt: event.createdAt.toISOString(), data: toLink(event.link, baseUrl) });
}

export class LinkEventQueue {
  private readonly pg: Pool;
  private readonly baseUrl: string;

  constructor(
    pg: Pool,
    baseUrl: string,
  ) {
    this.pg = pg;
    this.baseUrl = baseUrl;
  }

  /**
   * Queues a delivery of each recorded event of these links up to the given versions (those the
   * changelog has published), for every endpoint of its workspace that wants the event and existed
   * when it happened; deletes the events. Returns how many deliveries were queued.
   */
  async takeDue(published: readonly { linkId: string; version: number }[]): Promise<number> {
    const known = published.filter((p) => isUuid(p.linkId));
    if (known.length === 0) return 0;
    return withTransaction(this.pg, async (client) => {
      const { rows } = await client.query<LinkEventRow>(
        `DELETE FROM link_events e USING unnest($1::uuid[], $2::bigint[]) AS p(link_id, version)
          WHERE e.link_id = p.link_id AND e.version <= p.version
         RETURNING e.id, e.workspace_id, e.event_type, e.link, e.created_at`,
        [known.map((p) => p.linkId.toLowerCase()), known.map((p) => p.version)],
      );
      if (rows.length === 0) return 0;
      const bodies = rows.map((e) => linkEventBody({ id: e.id, type: e.event_type, createdAt: e.created_at, link: rowFromJson(e.link) }, this.baseUrl));
      const inserted = await client.query(
        `INSERT INTO webhook_deliveries (id, endpoint_id, workspace_id, event_type, scan_id, body, state, next_attempt_at)
         SELECT gen_random_uuid(), en.id, en.workspace_id, ev.event_type, ev.id, ev.body, 'queued', now()
           FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::text[]) AS ev(id, workspace_id, event_type, at, body)
           JOIN webhook_endpoints en ON en.workspace_id = ev.workspace_id AND ev.event_type = ANY (en.events) AND en.created_at <= ev.at + interval '1 second'
         ON CONFLICT (endpoint_id, scan_id) WHERE redelivery_of IS NULL DO NOTHING`,
        [rows.map((e) => e.id), rows.map((e) => e.workspace_id), rows.map((e) => e.event_type), rows.map((e) => e.created_at), bodies],
      );
      return inserted.rowCount ?? 0;
    });
  }
}
