// The service's inbound SMTP address for reports (bounces and complaints), run
// by the ingress: MX records of the bounce domain point here, and Return-Path /
// feedback loops deliver to it. Every message is accepted (a report is never
// bounced back); what is not a report about our mail is logged and dropped.
import { SMTPServer } from 'smtp-server';
import { parseReport } from './report-parser.ts';
import { takeReports, type ReportIntakeDeps } from './report-intake.ts';
import { listenSmtp, type ListeningSmtp } from '../smtp-listen.ts';

/** Reports are small; a larger message is refused while it is sent. */
const MAX_BYTES = 10 * 1024 * 1024;

export type InboundSmtp = ListeningSmtp;

export async function startInboundSmtp(deps: ReportIntakeDeps, host: string, port: number): Promise<InboundSmtp> {
  const log = deps.log.child({ component: 'mail-inbound-smtp' });
  const intake = { ...deps, log };
  const server = new SMTPServer({
    name: 'linkmail-inbound',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: MAX_BYTES,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', callback);
      stream.on('end', () => {
        if ((stream as { sizeExceeded?: boolean }).sizeExceeded) {
          callback(Object.assign(new Error('Message too large for a report'), { responseCode: 552 }));
          return;
        }
        parseReport(Buffer.concat(chunks))
          .then((reports) => takeReports(intake, reports, session.envelope.rcptTo.map((r) => r.address)))
          .then((applied) => {
            if (applied === 0) log.info('inbound message is no report about our mail; dropped');
            callback(null, 'Report received');
          }, (err) => {
            // Our fault (Postgres away): a temporary refusal, so the sender tries again.
            log.warn({ err }, 'inbound report could not be taken; asked the sender to retry');
            callback(Object.assign(new Error('Try again later'), { responseCode: 451 }));
          });
      });
    },
  });
  return listenSmtp(server, host, port, log, 'inbound SMTP');
}
