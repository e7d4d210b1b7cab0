// A message submitted to the SMTP relay, as the request POST /emails would have
// made of it, so that one set of rules (prepare-message.ts) checks both. The
// envelope (RCPT TO) says who receives it: To and Cc are the header's addresses
// that are envelope recipients, Bcc the envelope's others; a header address that
// is not in the envelope receives nothing. Then From, Reply-To, Subject, the HTML
// and text parts, and attachments (inline ones keep their Content-ID). Its idempotency key is
// `smtp:<key id>:<Message-ID>` (spec, Idempotency 6), none without a Message-ID.
import type { AddressObject, ParsedMail } from 'mailparser';
import { findUnstorable } from '../../platform/http/storable-text.ts';
import type { SendEmailInput } from '../emails/email-schemas.ts';

const addresses = (header: AddressObject | AddressObject[] | undefined): { name: string; address: string }[] =>
  (Array.isArray(header) ? header : header ? [header] : [])
    .flatMap((h) => h.value)
    .flatMap((a) => (a.group ?? [a]))
    .filter((a): a is { name: string; address: string } => Boolean(a.address));

/** `Name <email>`, with the name quoted when it holds characters a mailbox name cannot. */
const mailbox = (a: { name: string; address: string }) => (a.name ? `"${a.name.replace(/["\\]/g, '')}" <${a.address}>` : a.address);

const MAX_SUBJECT = 998;
/** The longest idempotency key POST /emails takes. */
const MAX_KEY = 256;

export type RelayInput = { input: SendEmailInput; idempotencyKey: string | null } | { problem: string };

export function relayInput(parsed: ParsedMail, envelopeRecipients: readonly string[], keyId: string): RelayInput {
  const from = addresses(parsed.from);
  if (from.length !== 1) return { problem: 'The message needs exactly one From address' };
  if (!parsed.subject?.trim()) return { problem: 'The message needs a Subject' };
  if (parsed.subject.length > MAX_SUBJECT) return { problem: `The Subject is longer than ${MAX_SUBJECT} characters` };
  const envelope = new Set(envelopeRecipients.map((r) => r.toLowerCase()));
  const inEnvelope = (a: { address: string }) => envelope.has(a.address.toLowerCase());
  const to = addresses(parsed.to).filter(inEnvelope);
  const cc = addresses(parsed.cc).filter(inEnvelope);
  if (to.length === 0) return { problem: 'None of the To header\'s addresses is a recipient (RCPT TO); a message to Bcc recipients only is not supported: give it a To' };
  const shown = new Set([...to, ...cc].map((a) => a.address.toLowerCase()));
  const bcc = envelopeRecipients.filter((r) => !shown.has(r.toLowerCase()));
  const html = typeof parsed.html === 'string' ? parsed.html : undefined;
  const text = parsed.text && parsed.text.trim() !== '' ? parsed.text : undefined;
  const key = parsed.messageId ? `smtp:${keyId}:${parsed.messageId}` : null;
  if (key !== null && key.length > MAX_KEY) return { problem: `The Message-ID is longer than ${MAX_KEY - keyId.length - 6} characters` };
  const input: SendEmailInput = {
    from: mailbox(from[0]!),
    to: to.map(mailbox),
    ...(cc.length > 0 ? { cc: cc.map(mailbox) } : {}),
    ...(bcc.length > 0 ? { bcc } : {}),
    ...(parsed.replyTo ? { reply_to: addresses(parsed.replyTo).map(mailbox) } : {}),
    subject: parsed.subject.replace(/[\r\n]+/g, ' ').trim(),
    ...(html !== undefined ? { html } : {}),
    ...(text !== undefined ? { text } : {}),
    ...(parsed.attachments.length > 0
      ? {
          attachments: parsed.attachments.map((a, i) => ({
            filename: a.filename ?? `attachment-${i + 1}`,
            content: a.content.toString('base64'),
            ...(a.contentType ? { content_type: a.contentType } : {}),
            ...(a.cid ? { content_id: a.cid } : {}),
          })),
        }
      : {}),
  };
  // The checks POST /emails gets where its JSON is parsed: text every store can hold.
  const bad = findUnstorable({ ...input, message_id: parsed.messageId ?? '' });
  if (bad) return { problem: `The message's ${bad.path.slice(1).split('/')[0]} ${bad.reason}` };
  return { input, idempotencyKey: key };
}
