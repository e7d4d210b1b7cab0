// A broadcast's recipients with an event of one type (Resend's
// broadcasts.recipients): each message of the broadcast that has such an event,
// with its contact and address, how many (opens, clicks) and, for clicks, the
// links. Resend's `sent` and `delivered` are both our `delivered` (the receiving
// server accepted the message); a bounce recorded here is permanent (a refusal
// at hand-over or a permanent bounce report). A machine's opens and clicks,
// flagged automated, are not counted. Newest message first.
import type { Pool } from '../../platform/postgres/pool.ts';
import { resendPage, type ResendList, type ResendPageRequest } from '../resend/resend-pages.ts';

export const RECIPIENT_EVENT_TYPES = ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'complained', 'unsubscribed', 'suppressed'] as const;
export type RecipientEventType = (typeof RECIPIENT_EVENT_TYPES)[number];

const OUR_TYPE: Record<RecipientEventType, string> = {
  sent: 'delivered', delivered: 'delivered', opened: 'opened', clicked: 'clicked', bounced: 'bounced', complained: 'complained', unsubscribed: 'unsubscribed', suppressed: 'suppressed',
};

interface Row {
  id: string;
  contact_id: string | null;
  email: string;
  created_at: Date;
  count: string;
  clicked_links: { url: string; clicks: number }[] | null;
}

export function broadcastRecipients(pg: Pool, broadcastId: string, query: ResendPageRequest & { type: RecipientEventType; email?: string }): Promise<ResendList<object>> {
  const select = `
    SELECT m.id, r.contact_id, m.to_addresses[1] AS email, m.created_at, count(e.id) AS count,
           CASE WHEN $2 = 'clicked' THEN (SELECT json_agg(json_build_object('url', l.url, 'clicks', l.n) ORDER BY l.n DESC, l.url)
             FROM (SELECT c.url, count(*)::int AS n FROM mail_events c WHERE c.message_id = m.id AND c.type = 'clicked' AND NOT c.automated GROUP BY c.url) l) END AS clicked_links
      FROM mail_broadcast_recipients r JOIN mail_messages m ON m.id = r.message_id
      JOIN mail_events e ON e.message_id = m.id AND e.type = $2 AND NOT e.automated
     WHERE r.broadcast_id = $1 AND ($3::text IS NULL OR m.to_addresses[1] = lower($3))
     GROUP BY m.id, r.contact_id`;
  const type = query.type;
  return resendPage<Row, object>(pg, { select, params: [broadcastId, OUR_TYPE[type], query.email ?? null] }, query, (row) => ({
    id: row.id,
    contact_id: row.contact_id,
    email: row.email,
    ...(type === 'opened' || type === 'clicked' ? { count: Number(row.count) } : {}),
    ...(type === 'clicked' ? { clicked_links: row.clicked_links ?? [] } : {}),
    ...(type === 'bounced' ? { bounce_type: 'permanent' } : {}),
  }));
}
