// The mail sender's Prometheus series: hand-overs by outcome (counted as they
// happen) and the send queue by state (read from Postgres at each scrape).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Pool } from '../../platform/postgres/pool.ts';
import { series } from '../../platform/metrics/series.ts';

export const mailSends = series('linkmail_mail_sends_total', () => new Counter({
  name: 'linkmail_mail_sends_total',
  help: 'Messages the sender took from its queue, by outcome: sent, bounced (permanent refusal), retrying, failed (last attempt or never fits), suppressed, waiting (an allowance is spent, or the sender stopped).',
  labelNames: ['outcome'] as const,
}));

/**
 * linkmail_mail_send_queue{state}: due (the sender may take it now or as soon as it gets to it),
 * waiting (its schedule, a retry's or a daily allowance's next day, or queued behind mail a spent
 * allowance holds), leased (a sender has it), retrying.
 *
 * A message a spent allowance holds is put back with next_attempt_at at the next UTC midnight,
 * past its queued_at (enqueueing and rescheduling set the two equal). What queues behind it waits
 * too: the rest of its domain's mail (the same allowances refuse it), and everything of its
 * organization once `window` held messages fill the sender's window of that many (send-queue.ts).
 * Counted as due, an organization at its cap would look like a stuck sender.
 */
export function sendQueueGauge(pg: Pool, window: number) {
  return (registry: Registry): void => {
    new Gauge({
      name: 'linkmail_mail_send_queue',
      help: 'Messages in the send queue by state: due now, waiting (for their schedule, or for the next UTC day because a daily allowance is spent, themselves or mail queued ahead of them), leased by a sender, retrying after a transient failure.',
      labelNames: ['state'] as const,
      registers: [registry],
      async collect() {
        const { rows: [q] } = await pg.query<{ due: number; waiting: number; leased: number; retrying: number }>(
          `WITH queue AS (
             SELECT state, next_attempt_at <= now() AS time_come,
                    bool_or(${HELD}) OVER (PARTITION BY organization_id, from_domain ORDER BY queued_at, accepted_at, message_id) AS held_in_domain,
                    count(*) FILTER (WHERE ${HELD}) OVER (PARTITION BY organization_id ORDER BY queued_at, accepted_at, message_id) AS held_in_organization
               FROM mail_deliveries WHERE state IN ('queued', 'sending')
           ), sendable AS (
             SELECT state, time_come AND NOT held_in_domain AND held_in_organization < $1 AS due FROM queue
           )
           SELECT count(*) FILTER (WHERE state = 'queued' AND due)::int AS due,
                  count(*) FILTER (WHERE state = 'queued' AND NOT due)::int AS waiting,
                  count(*) FILTER (WHERE state = 'sending')::int AS leased,
                  (SELECT count(*) FROM mail_deliveries WHERE state = 'retrying')::int AS retrying
             FROM sendable`,
          [window],
        );
        for (const [state, n] of Object.entries(q!)) this.set({ state }, n);
      },
    });
  };
}

/** A row put back until a later day by a spent daily allowance. */
const HELD = "state = 'queued' AND next_attempt_at > now() AND next_attempt_at > queued_at";
