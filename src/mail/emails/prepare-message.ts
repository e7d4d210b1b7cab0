// From a validated request body to the message to store: addresses parsed and
// counted, the From domain checked against the key and the organization's
// verified domains (by the caller), the parts' sizes and headers checked, and
// a hash of the request for idempotent replays. Refusals are ApiErrors naming
// the field; `at` prefixes their paths for batch items ("/3").
import { createHash } from 'node:crypto';
import { ApiError } from '../../platform/http/errors.ts';
import { formatMailbox, parseMailbox, type Mailbox } from '../http/email-address.ts';
import { neverFits, type DailyLimit } from '../sending/recipient-limits.ts';
import { MAX_PART_BYTES, MAX_RECIPIENTS, type SendEmailInput } from './email-schemas.ts';
import { parseSendTime } from './send-time.ts';

export const MAX_ATTACHMENT_BYTES = 40 * 1024 * 1024;

// Headers the service writes itself (or the sender will): a client's value would be ignored or conflict.
const OWN_HEADERS = new Set([
  'from', 'to', 'cc', 'bcc', 'reply-to', 'subject', 'date', 'message-id', 'sender', 'return-path', 'mime-version', 'content-type',
  'content-transfer-encoding', 'dkim-signature', 'list-unsubscribe', 'list-unsubscribe-post', 'received',
]);

export interface PreparedAttachment {
  filename: string;
  content_type: string | null;
  content_id: string | null;
  content: Buffer;
}

export interface PreparedMessage {
  from: Mailbox;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  /** Lower-cased addresses of to, cc and bcc, in order, without repeats. */
  recipientKeys: string[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  tags: { name: string; value: string }[];
  topic_id: string | null;
  scheduled_at: Date | null;
  attachments: PreparedAttachment[];
  idempotencyKey: string | null;
  requestHash: Buffer;
}

/** Key prefixes the service writes itself (broadcasts, automation steps, the SMTP relay): a client's key may not take one. */
const SERVICE_KEY = /^(broadcast|automation|smtp):/i;

/** Refuses a client's idempotency key in the service's own namespaces, which would block the service's message. */
export function refuseServiceKey(key: string | null, at = ''): void {
  if (key !== null && SERVICE_KEY.test(key)) {
    throw refuse(400, 'reserved_idempotency_key', 'Idempotency keys starting with broadcast:, automation: or smtp: are the service\'s own; choose another.', `${at}/idempotency_key`);
  }
}

const refuse = (status: number, code: string, message: string, path: string) => new ApiError(status, code, message, [{ path, message }]);

/** The time a scheduled_at names, or 400 invalid_scheduled_at. */
export function sendTimeOrRefused(value: string, path: string): Date {
  const time = parseSendTime(value);
  if (!time) throw refuse(400, 'invalid_scheduled_at', 'scheduled_at is ISO 8601 with an offset, or English such as "in 1 hour" or "tomorrow at 9am" (UTC).', path);
  return time;
}

function mailboxes(value: string | string[] | undefined, field: string, at: string): Mailbox[] {
  const list = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return list.map((entry, i) => {
    const mailbox = parseMailbox(entry);
    if (!mailbox) throw refuse(400, 'invalid_recipient', `${field}: "${entry.slice(0, 100)}" is not an email address (use email or Name <email>).`, `${at}/${field}${Array.isArray(value) ? `/${i}` : ''}`);
    return mailbox;
  });
}

/**
 * Refuses a message with more recipients than its organization's smallest daily allowance
 * (422 exceeds_daily_cap): counted whole against it, it could never go out.
 */
export function overDailyLimit(message: PreparedMessage, limit: DailyLimit, at = ''): ApiError | undefined {
  const recipients = message.recipientKeys.length;
  if (recipients <= limit.limit) return undefined;
  const text = neverFits(recipients, limit, true);
  return refuse(422, 'exceeds_daily_cap', text, `${at}/to`);
}

/** JSON with sorted keys, so that the same request hashes the same whatever its key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().filter((k) => (value as Record<string, unknown>)[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The hash that tells a repeat of an idempotency key from another request: of the request as the
 * client sent it (a template's id and variables, not what they filled in, which changes when the
 * template is edited), without its key.
 */
export function requestHashOf(sent: SendEmailInput): Buffer {
  const { idempotency_key: _key, ...request } = sent;
  return createHash('sha256').update(canonical(request)).digest();
}

/**
 * Checks what the schema cannot and returns the message; `headerKey` is the Idempotency-Key header
 * (single sends only); `sent` is the request as the client sent it (before a template was filled
 * in: email-template.ts), which its hash is of.
 */
export function prepareMessage(input: SendEmailInput, headerKey: string | undefined, at = '', sent: SendEmailInput = input): PreparedMessage {
  // A template was filled in before (email-template.ts): what is left must be a whole message.
  if (input.template !== undefined) throw new Error('prepareMessage: fill the template in first (email-template.ts)');
  for (const field of ['from', 'subject'] as const) {
    if (input[field] === undefined) throw refuse(400, 'validation_failed', `must have required property '${field}' (or a template that gives it)`, at);
  }
  const subject = input.subject!;
  // A template's variables may have made it longer than the schema lets a request's be.
  if (subject.length > 998) throw refuse(400, 'subject_too_long', 'The subject is longer than 998 characters once its variables are filled.', `${at}/subject`);
  const from = parseMailbox(input.from!);
  if (!from) throw refuse(400, 'invalid_from', 'from must be "email" or "Name <email>".', `${at}/from`);
  // Counted before any address is read: a list too long is refused as such, whatever it holds.
  const count = (value: string | string[] | undefined) => (value === undefined ? 0 : Array.isArray(value) ? value.length : 1);
  if (count(input.to) + count(input.cc) + count(input.bcc) > MAX_RECIPIENTS) throw refuse(400, 'too_many_recipients', `to, cc and bcc hold at most ${MAX_RECIPIENTS} addresses together.`, `${at}/to`);
  const to = mailboxes(input.to, 'to', at);
  const cc = mailboxes(input.cc, 'cc', at);
  const bcc = mailboxes(input.bcc, 'bcc', at);
  const replyTo = mailboxes(input.reply_to, 'reply_to', at);
  if (to.length === 0) throw refuse(400, 'missing_recipient', 'to needs at least one address.', `${at}/to`);
  if (input.html === undefined && input.text === undefined) throw refuse(400, 'missing_content', 'Send html, text or both.', `${at}/html`);
  for (const part of ['html', 'text'] as const) {
    const value = input[part];
    if (value !== undefined && Buffer.byteLength(value) > MAX_PART_BYTES) throw refuse(400, 'content_too_large', `${part} is larger than 2 MB.`, `${at}/${part}`);
  }
  for (const name of Object.keys(input.headers ?? {})) {
    if (OWN_HEADERS.has(name.toLowerCase())) throw refuse(400, 'reserved_header', `The ${name} header is set by the service; leave it out of headers.`, `${at}/headers/${name}`);
  }
  const attachments = (input as { attachments?: SendEmailInput['attachments'] }).attachments ?? [];
  let total = 0;
  const prepared = attachments.map((a, i) => {
    const path = `${at}/attachments/${i}`;
    if (a.path !== undefined) throw refuse(422, 'attachment_path_not_supported', 'Attachments are sent as base64 content; the service does not fetch paths.', `${path}/path`);
    if (a.content === undefined || a.filename === undefined) throw refuse(400, 'invalid_attachment', 'An attachment needs content (base64) and filename.', path);
    if (!/^[A-Za-z0-9+/\r\n]*={0,2}\s*$/.test(a.content)) throw refuse(400, 'invalid_attachment', 'content is not base64.', `${path}/content`);
    const content = Buffer.from(a.content, 'base64');
    total += content.length;
    if (total > MAX_ATTACHMENT_BYTES) throw refuse(400, 'attachments_too_large', 'Attachments hold at most 40 MB in all (decoded).', path);
    return { filename: a.filename, content_type: a.content_type ?? null, content_id: a.content_id ?? null, content };
  });
  const recipientKeys = [...new Set([...to, ...cc, ...bcc].map((m) => m.key))];
  const scheduledAt = input.scheduled_at === undefined ? null : sendTimeOrRefused(input.scheduled_at, `${at}/scheduled_at`);
  const bodyKey = input.idempotency_key;
  return {
    from,
    to: to.map(formatMailbox),
    cc: cc.map(formatMailbox),
    bcc: bcc.map(formatMailbox),
    reply_to: replyTo.map(formatMailbox),
    recipientKeys,
    subject,
    html: input.html ?? null,
    text: input.text ?? null,
    headers: input.headers ?? {},
    tags: input.tags ?? [],
    topic_id: input.topic_id ?? null,
    scheduled_at: scheduledAt,
    attachments: prepared,
    // The header wins over the body (spec, Idempotency 1).
    idempotencyKey: headerKey ?? bodyKey ?? null,
    requestHash: requestHashOf(sent),
  };
}
