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

/** linkmail_mail_send_queue{state}: due, waiting (a daily cap, a schedule, the next day), leased (a sender has it), retrying. */
export function sendQueueGauge(pg: Pool) {
  return (registry: Registry): void => {
    new Gauge({
      name: 'linkmail_mail_send_queue',
      help: 'Messages in the send queue by state: due now, waiting (for a daily cap, their schedule or the next UTC day), leased by a sender, retrying after a transient failure.',
      labelNames: ['state'] as const,
      registers: [registry],
      async collect() {
        const { rows: [q] } = await pg.query<{ due: number; waiting: number; leased: number; retrying: number }>(
          `SELECT count(*) FILTER (WHERE state = 'queued' AND next_attempt_at <= now())::int AS due,
                  count(*) FILTER (WHERE state = 'queued' AND next_attempt_at > now())::int AS waiting,
                  count(*) FILTER (WHERE state = 'sending')::int AS leased,
                  count(*) FILTER (WHERE state = 'retrying')::int AS retrying
             FROM mail_deliveries WHERE state IN ('queued', 'sending', 'retrying')`,
        );
        for (const [state, n] of Object.entries(q!)) this.set({ state }, n);
      },
    });
  };
}
