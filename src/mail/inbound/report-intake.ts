// What a report does: a bounce marks the message bounced (an event with the
// recipient), a complaint marks it complained; a permanent bounce and a
// complaint put the address on the organization's suppression list, so nothing
// more goes to it (recipient-verdicts.ts). A delay changes nothing. A report
// received twice adds nothing.
//
// Anyone can send mail to the inbound address, so a report is trusted only as far
// as it can be tied to a message and a recipient of it:
//   - sent to a return path of ours (bounces+<id>-<signature>@…): it concerns that
//     message, whatever it quotes; a return path whose signature is not ours drops
//     the whole report, as does one quoting another of our messages' Message-ID;
//   - else the Message-ID it quotes names the message;
// and either way it changes only one of that message's own recipients (to, cc,
// bcc): a report about any other address is dropped and logged.
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import type { Logger } from '../../platform/logger.ts';
import type { MailEventOutbox } from '../events/mail-events.ts';
import { parseMailbox } from '../http/email-address.ts';
import { readReturnPath } from '../sending/return-path.ts';
import { recordVerdicts } from '../suppressions/recipient-verdicts.ts';
import type { Report } from './report-parser.ts';

export interface ReportIntakeDeps {
  pg: Pool;
  events: MailEventOutbox;
  log: Logger;
  /** Signs return paths (MAIL_LINK_SECRET). */
  secret: string;
}

/** The message the envelope's recipients name: `forged` when one is a return path without our signature. */
function envelopeMessage(secret: string, rcptTo: readonly string[]): { forged: true } | { forged: false; messageId: string | null } {
  const ids = new Set<string>();
  for (const address of rcptTo) {
    const read = readReturnPath(secret, address);
    if (read.kind === 'forged') return { forged: true };
    if (read.kind === 'message') ids.add(read.messageId);
  }
  // Return paths of two messages in one report: it cannot be about both.
  if (ids.size > 1) return { forged: true };
  return { forged: false, messageId: ids.values().next().value ?? null };
}

/** Applies the reports of one received message sent to `rcptTo`; returns how many changed something. */
export async function takeReports(deps: ReportIntakeDeps, reports: readonly Report[], rcptTo: readonly string[]): Promise<number> {
  const { pg, events, log } = deps;
  const envelope = envelopeMessage(deps.secret, rcptTo);
  if (envelope.forged) {
    if (reports.length > 0) log.warn({ rcptTo, messageId: reports[0]!.messageId }, 'report sent to a return path without our signature; dropped');
    return 0;
  }
  let applied = 0;
  for (const report of reports) {
    if (report.kind === 'delay') continue;
    if (envelope.messageId && report.messageId && report.messageId !== envelope.messageId) {
      log.warn({ messageId: envelope.messageId, quoted: report.messageId }, 'report sent to one message\'s return path quotes another message; dropped');
      continue;
    }
    const messageId = envelope.messageId ?? report.messageId;
    if (!messageId) continue;
    const ids = await withTransaction(pg, async (client) => {
      const { rows: [message] } = await client.query<{ organization_id: string; recipients: string[] }>(
        'SELECT organization_id, to_addresses || cc_addresses || bcc_addresses AS recipients FROM mail_messages WHERE id = $1', [messageId],
      );
      if (!message) return null;
      const own = new Set(message.recipients.map((a) => parseMailbox(a)?.key ?? a.toLowerCase()));
      if (!report.recipient || !own.has(report.recipient)) {
        log.warn({ messageId, recipient: report.recipient, kind: report.kind }, 'report about an address that is no recipient of the message; dropped');
        return null;
      }
      return recordVerdicts(client, [{
        organizationId: message.organization_id, messageId, recipient: report.recipient, source: 'report',
        ...(report.kind === 'bounce' ? { kind: 'bounce', detail: report.status, permanent: report.permanent } : { kind: 'complaint', detail: report.feedbackType, permanent: true }),
      }]);
    });
    if (ids) {
      applied++;
      await events.publish(ids);
    }
  }
  return applied;
}
