// An SMTP relay for one test file (smtp-server on a loopback port): records each
// message with the moment its DATA ended, and answers what the test tells it
// (accept, or an SMTP error such as 451 or 550) per recipient address: to the
// message (after DATA, for the whole message) or to one RCPT TO (that recipient only).
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Captured {
  receivedAt: number;
  from: string;
  to: string[];
  raw: string;
  messageId: string | null;
}

export interface SmtpCapture {
  url: string;
  messages: Captured[];
  /** The reply for messages to this address: an SMTP code and text, or undefined to accept. */
  replyTo: Map<string, { code: number; text: string }>;
  /** The reply to RCPT TO of this address (the others of the message are still taken), or undefined to accept it. */
  refuseRcpt: Map<string, { code: number; text: string }>;
  /** Messages whose Message-ID header contains `id`. */
  byMessageId(id: string): Captured[];
  close(): Promise<void>;
}

export async function startSmtpCapture(): Promise<SmtpCapture> {
  const messages: Captured[] = [];
  const replyTo = new Map<string, { code: number; text: string }>();
  const refuseRcpt = new Map<string, { code: number; text: string }>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    hideSTARTTLS: true,
    logger: false,
    onRcptTo(address, _session, callback) {
      const refusal = refuseRcpt.get(address.address);
      callback(refusal ? Object.assign(new Error(refusal.text), { responseCode: refusal.code }) : undefined);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((r) => r.address);
        const refusal = to.map((address) => replyTo.get(address)).find(Boolean);
        if (refusal) {
          const err = Object.assign(new Error(refusal.text), { responseCode: refusal.code });
          callback(err);
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        const messageId = /^Message-ID:\s*(.+)$/im.exec(raw)?.[1]?.trim() ?? null;
        messages.push({ receivedAt: Date.now(), from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to, raw, messageId });
        callback(null, 'queued');
      });
    },
  });
  // A sender killed mid-send resets its connection; smtp-server reports that as an 'error' event,
  // which without a listener would be an uncaught exception in the test process.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    replyTo,
    refuseRcpt,
    byMessageId: (id) => messages.filter((m) => m.messageId?.includes(id)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
