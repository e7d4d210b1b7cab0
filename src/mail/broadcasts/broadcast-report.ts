// GET /api/v1/broadcasts/:id/report (spec: Broadcast report object). Every message
// count is of distinct messages; recipients and skipped count recipient rows;
// `opened` counts a message with an open or a click. Rates are null on a zero
// denominator: open, click and unsubscribe over delivered, bounce over sent.
//   queued     recipient rows queued or waiting for the A/B winner whose message is not yet
//              handed over (nor dropped by the sender: failed, or suppressed at send time)
//   sent       messages handed over to the relay (accepted, or refused there for good)
//   delivered, bounced, complained, opened, clicked, unsubscribed: messages with such an event
// Read from counters kept as the fan-out, the sender and the tracking write
// (migration 017: mail_broadcast_counts, mail_broadcast_link_clicks), so a report
// reads a few rows whatever the broadcast's size.
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
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why the worker ended the broadcast itself (as stats.reason): a fan-out that failed for good, a domain no longer verified, nobody eligible; null otherwise.' }),
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

const FLAGS = ['recipients', 'sent', 'dropped', 'delivered', 'bounced', 'complained', 'opened', 'clicked', 'unsubscribed'] as const;
type Flag = (typeof FLAGS)[number];

const rate = (n: number, of: number) => (of === 0 ? null : Number((n / of).toFixed(4)));

/** The broadcast's counters by variant ('' for none) and flag. */
export async function broadcastCounts(db: Pick<Pool, 'query'>, broadcastId: string): Promise<Map<string, Record<Flag, number>>> {
  const { rows } = await db.query<{ variant: string; flag: Flag; n: string }>('SELECT variant, flag, n FROM mail_broadcast_counts WHERE broadcast_id = $1', [broadcastId]);
  const counts = new Map<string, Record<Flag, number>>();
  for (const r of rows) {
    const of = counts.get(r.variant) ?? (Object.fromEntries(FLAGS.map((f) => [f, 0])) as Record<Flag, number>);
    of[r.flag] = Number(r.n);
    counts.set(r.variant, of);
  }
  return counts;
}

export async function broadcastReport(pg: Pool, b: BroadcastRow) {
  const [counts, { rows: links }, { rows: domain }] = await Promise.all([
    broadcastCounts(pg, b.id),
    pg.query<{ url: string; clicks: string }>(`SELECT url, clicks FROM mail_broadcast_link_clicks WHERE broadcast_id = $1 ORDER BY clicks DESC, url LIMIT ${TOP_LINKS}`, [b.id]),
    pg.query<{ tracking_host: string | null }>('SELECT tracking_host FROM mail_domains WHERE organization_id = $1 AND name = $2', [b.organization_id, b.from_domain]),
  ]);
  const sum = (flag: Flag) => [...counts.values()].reduce((n, c) => n + c[flag], 0);
  const totals = {
    recipients: b.eligible,
    skipped: b.skipped,
    queued: Math.max(0, b.queued - sum('sent') - sum('dropped')),
    sent: sum('sent'),
    delivered: sum('delivered'),
    bounced: sum('bounced'),
    complained: sum('complained'),
    opened: sum('opened'),
    clicked: sum('clicked'),
    unsubscribed: sum('unsubscribed'),
  };
  const variants = (['A', 'B'] as const).filter((v) => counts.has(v));
  return {
    object: 'broadcast_report' as const,
    broadcast_id: b.id,
    status: b.status,
    reason: b.reason,
    tracking_enabled: Boolean(domain[0]?.tracking_host),
    totals,
    rates: {
      open: rate(totals.opened, totals.delivered),
      click: rate(totals.clicked, totals.delivered),
      bounce: rate(totals.bounced, totals.sent),
      unsubscribe: rate(totals.unsubscribed, totals.delivered),
    },
    variants: variants.length === 0 ? null : variants.map((variant) => {
      const c = counts.get(variant)!;
      return {
        variant, subject: variant === 'B' ? b.subject_b ?? b.subject : b.subject, recipients: c.recipients, sent: c.sent, delivered: c.delivered,
        opened: c.opened, clicked: c.clicked, open_rate: rate(c.opened, c.delivered), click_rate: rate(c.clicked, c.delivered),
      };
    }),
    winner: b.ab_winner,
    top_links: links.map((l) => ({ url: l.url, clicks: Number(l.clicks) })),
    generated_at: new Date().toISOString(),
  };
}
