// GET /api/v1/broadcasts/:id/report (spec: Broadcast report object). Every message
// count is of distinct messages; recipients and skipped count recipient rows;
// `opened` counts a message with an open or a click. Rates are null on a zero
// denominator: open, click and unsubscribe over delivered, bounce over sent.
//   queued     recipients waiting for the A/B winner, and messages not yet handed over
//   sent       messages handed over to the relay (accepted, or refused there for good)
//   delivered, bounced, complained, opened, clicked, unsubscribed: messages with such an event
// Counted from the recipient rows joined to the deliveries and events of their
// messages: one pass over the broadcast's rows per request.
import { Type } from '@sinclair/typebox';
import type { Pool } from '../../platform/postgres/pool.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import { BROADCAST_STATUSES, type BroadcastRow } from './broadcasts.ts';

const TOP_LINKS = 10;
const Rate = Type.Union([Type.Number(), Type.Null()]);

export const BroadcastReport = Type.Object(
  {
    object: Type.Literal('broadcast_report'),
    broadcast_id: Type.String(),
    status: StringEnum(BROADCAST_STATUSES),
    tracking_enabled: Type.Boolean({ description: 'False when the sending domain has no tracking host: opens and clicks are then not collected.' }),
    totals: Type.Object({
      recipients: Type.Integer(), skipped: Type.Integer(), queued: Type.Integer(), sent: Type.Integer(), delivered: Type.Integer(),
      bounced: Type.Integer(), complained: Type.Integer(), opened: Type.Integer(), clicked: Type.Integer(), unsubscribed: Type.Integer(),
    }),
    rates: Type.Object({ open: Rate, click: Rate, bounce: Rate, unsubscribe: Rate }),
    variants: Type.Union([Type.Array(Type.Object({
      variant: StringEnum(['A', 'B'] as const), subject: Type.String(), recipients: Type.Integer(), sent: Type.Integer(), delivered: Type.Integer(),
      opened: Type.Integer(), clicked: Type.Integer(), open_rate: Rate, click_rate: Rate,
    })), Type.Null()], { description: 'Null when no recipient has a variant.' }),
    winner: Type.Union([StringEnum(['A', 'B'] as const), Type.Null()]),
    top_links: Type.Array(Type.Object({ url: Type.String(), clicks: Type.Integer() }), { description: `The ${TOP_LINKS} most clicked links, by clicks.` }),
    generated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'BroadcastReport', title: 'BroadcastReport' },
);

interface Counts {
  variant: 'A' | 'B' | null;
  recipients: number;
  skipped: number;
  queued: number;
  sent: number;
  delivered: number;
  bounced: number;
  complained: number;
  opened: number;
  clicked: number;
  unsubscribed: number;
}

const rate = (n: number, of: number) => (of === 0 ? null : Number((n / of).toFixed(4)));

export async function broadcastReport(pg: Pool, b: BroadcastRow) {
  const [{ rows: perVariant }, { rows: links }, { rows: domain }] = await Promise.all([
    pg.query<Counts>(
      `WITH m AS (
         SELECT r.variant, r.state, r.message_id, d.state AS delivery,
                bool_or(e.type = 'delivered') AS delivered, bool_or(e.type = 'bounced') AS bounced, bool_or(e.type = 'complained') AS complained,
                bool_or(e.type IN ('opened', 'clicked')) AS opened, bool_or(e.type = 'clicked') AS clicked, bool_or(e.type = 'unsubscribed') AS unsubscribed
           FROM mail_broadcast_recipients r
           LEFT JOIN mail_deliveries d ON d.message_id = r.message_id
           LEFT JOIN mail_events e ON e.message_id = r.message_id
          WHERE r.broadcast_id = $1
          GROUP BY r.contact_id, r.variant, r.state, r.message_id, d.state)
       SELECT variant, count(*)::int AS recipients,
              count(*) FILTER (WHERE state = 'skipped')::int AS skipped,
              count(*) FILTER (WHERE state = 'waiting' OR (state = 'queued' AND coalesce(delivery, 'queued') IN ('queued', 'sending', 'retrying')))::int AS queued,
              count(*) FILTER (WHERE delivery IN ('sent', 'bounced'))::int AS sent,
              count(*) FILTER (WHERE delivered)::int AS delivered, count(*) FILTER (WHERE bounced)::int AS bounced,
              count(*) FILTER (WHERE complained)::int AS complained, count(*) FILTER (WHERE opened)::int AS opened,
              count(*) FILTER (WHERE clicked)::int AS clicked, count(*) FILTER (WHERE unsubscribed)::int AS unsubscribed
         FROM m GROUP BY variant`,
      [b.id],
    ),
    pg.query<{ url: string; clicks: number }>(
      `SELECT e.url, count(*)::int AS clicks FROM mail_broadcast_recipients r JOIN mail_events e ON e.message_id = r.message_id
        WHERE r.broadcast_id = $1 AND e.type = 'clicked' AND e.url IS NOT NULL GROUP BY e.url ORDER BY clicks DESC, e.url LIMIT ${TOP_LINKS}`,
      [b.id],
    ),
    pg.query<{ tracking_host: string | null }>('SELECT tracking_host FROM mail_domains WHERE organization_id = $1 AND name = $2', [b.organization_id, b.from_domain]),
  ]);
  const keys = ['recipients', 'skipped', 'queued', 'sent', 'delivered', 'bounced', 'complained', 'opened', 'clicked', 'unsubscribed'] as const;
  const totals = Object.fromEntries(keys.map((k) => [k, perVariant.reduce((sum, row) => sum + row[k], 0)])) as Record<(typeof keys)[number], number>;
  const variants = perVariant.filter((v) => v.variant !== null).sort((x, y) => x.variant!.localeCompare(y.variant!));
  return {
    object: 'broadcast_report' as const,
    broadcast_id: b.id,
    status: b.status,
    tracking_enabled: Boolean(domain[0]?.tracking_host),
    totals,
    rates: {
      open: rate(totals.opened, totals.delivered),
      click: rate(totals.clicked, totals.delivered),
      bounce: rate(totals.bounced, totals.sent),
      unsubscribe: rate(totals.unsubscribed, totals.delivered),
    },
    variants: variants.length === 0 ? null : variants.map((v) => ({
      variant: v.variant!, subject: v.variant === 'B' ? b.subject_b ?? b.subject : b.subject, recipients: v.recipients, sent: v.sent, delivered: v.delivered,
      opened: v.opened, clicked: v.clicked, open_rate: rate(v.opened, v.delivered), click_rate: rate(v.clicked, v.delivered),
    })),
    winner: b.ab_winner,
    top_links: links,
    generated_at: new Date().toISOString(),
  };
}
