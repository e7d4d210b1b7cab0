// What a report does: a bounce marks the message bounced (an event with the
// recipient), a complaint marks it complained; a permanent bounce and a
// complaint put the address on the organization's suppression list, so nothing
// more goes to it. A delay changes nothing. A report received twice adds nothing.
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { recordEvents, type MailEventQueue } from '../events/mail-events.ts';
import type { Report } from './report-parser.ts';

export async function takeReports(pg: Pool, events: MailEventQueue, reports: readonly Report[]): Promise<number> {
  let applied = 0;
  for (const report of reports) {
    if (report.kind === 'delay') continue;
    const ids = await withTransaction(pg, async (client) => {
      const { rows: [message] } = await client.query<{ organization_id: string }>('SELECT organization_id FROM mail_messages WHERE id = $1', [report.messageId]);
      if (!message) return null;
      const type = report.kind === 'bounce' ? 'bounced' : 'complained';
      const detail = report.kind === 'bounce' ? report.status : report.feedbackType;
      const recorded = await recordEvents(client, [{
        organization_id: message.organization_id, message_id: report.messageId, type, recipient: report.recipient, detail,
        once_key: `${type}-report:${report.messageId}:${report.recipient ?? ''}`,
      }]);
      const suppress = report.recipient && (report.kind === 'complaint' || report.permanent);
      if (suppress) {
        await client.query(
          'INSERT INTO mail_suppressions (organization_id, email, reason) VALUES ($1, $2, $3) ON CONFLICT (organization_id, email) DO NOTHING',
          [message.organization_id, report.recipient, report.kind === 'bounce' ? 'bounce' : 'complaint'],
        );
      }
      return recorded;
    });
    if (ids) {
      applied++;
      await events.publish(ids);
    }
  }
  return applied;
}
