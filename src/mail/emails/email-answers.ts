// What the API answers about emails, in Resend's shapes: the schemas of the
// answers of /emails (the email, a page of the list, an id) and how a stored
// message becomes them, for the routes and the MCP tools alike.
import { Type } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import { NullableTimestamp, Timestamp } from '../http/mail-schemas.ts';
import type { ListedRow } from './email-list.ts';
import { addressing, type MessageRow } from './messages.ts';

export const LAST_EVENTS = ['queued', 'scheduled', 'suppressed', 'canceled', 'delivered', 'delivery_delayed', 'bounced', 'failed', 'complained'] as const;

export const Created = Type.Object({ id: Type.String() }, { $id: 'EmailId', title: 'EmailId' });
export const BatchCreated = Type.Object(
  {
    data: Type.Array(ref(Created), { description: 'One id per accepted item, in order.' }),
    errors: Type.Optional(Type.Array(Type.Object({ index: Type.Integer(), message: Type.String(), code: Type.String() }), { description: 'Permissive mode only: the refused items.' })),
  },
  { $id: 'EmailBatchResult', title: 'EmailBatchResult' },
);
/** What an email shows both whole and in a list. */
const EmailSummary = {
  id: Type.String(),
  from: Type.String(),
  to: Type.Array(Type.String()),
  cc: Type.Array(Type.String()),
  bcc: Type.Array(Type.String()),
  reply_to: Type.Array(Type.String()),
  subject: Type.String(),
  topic_id: Type.Union([Type.String(), Type.Null()]),
  scheduled_at: NullableTimestamp(),
  created_at: Timestamp(),
};
export const EmailObject = Type.Object(
  {
    object: Type.Literal('email'),
    ...EmailSummary,
    html: Type.Union([Type.String(), Type.Null()]),
    text: Type.Union([Type.String(), Type.Null()]),
    headers: Type.Record(Type.String(), Type.String()),
    tags: Type.Array(Type.Object({ name: Type.String(), value: Type.String() })),
    last_event: StringEnum(LAST_EVENTS, {
      description: 'queued: waiting for the sender (its turn, a daily allowance or the send rate); scheduled: held until scheduled_at; suppressed: every recipient is on the suppression list, nothing is sent; canceled: canceled before it was handed over, never sent; ' +
        'delivered: handed over to the relay; delivery_delayed: a transient failure, another attempt follows; bounced: refused for good (SMTP 5xx, or a bounce report received later); failed: 4 transient failures, no more attempts; complained: a recipient reported it as spam (a feedback report).',
    }),
    attempts: Type.Array(Type.Object({
      attempt: Type.Integer({ minimum: 1 }),
      at: Type.String({ format: 'date-time' }),
      outcome: StringEnum(['delivered', 'deferred', 'bounced', 'skipped'] as const, {
        description: 'skipped: not handed over by the sender\'s own decision: every recipient suppressed or unsubscribed while it waited (last_event suppressed), or more recipients than a daily cap lowered since it was accepted (last_event failed).',
      }),
      response: Type.String({ description: 'The relay\'s reply, or the transport error, or why it was skipped; recipients refused or left out are named.' }),
    }), { description: 'The hand-over attempts, oldest first.' }),
    suppressed: Type.Array(Type.String(), { description: 'Recipients left out because they are on the suppression list.' }),
    recipient_count: Type.Integer({ description: 'Recipients it goes to; each counts as one email for the daily allowances.' }),
    attachments: Type.Array(Type.Object({ filename: Type.String(), content_type: Type.Union([Type.String(), Type.Null()]), content_id: Type.Union([Type.String(), Type.Null()]), size: Type.Integer() })),
    idempotency_key: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'Email', title: 'Email' },
);

/** Resend's list item: the email without its parts, tags and attachments. */
export const ListedEmail = Type.Object(
  {
    ...EmailSummary,
    last_event: StringEnum(LAST_EVENTS, { description: 'As on GET /emails/:id.' }),
  },
  { $id: 'ListedEmail', title: 'ListedEmail' },
);
export const EmailList = Type.Object(
  {
    object: Type.Literal('list'),
    has_more: Type.Boolean({ description: 'More emails lie beyond this page, in the direction asked (older after `after` or without a cursor, newer with `before`).' }),
    data: Type.Array(ref(ListedEmail), { description: 'Newest first.' }),
  },
  { $id: 'EmailList', title: 'EmailList' },
);
export const Changed = Type.Object({ object: Type.Literal('email'), id: Type.String() }, { $id: 'EmailChanged', title: 'EmailChanged' });
/** The message's last event: what the sender made of it, or else its state when accepted. */
function lastEvent(r: Pick<MessageRow, 'report' | 'delivery_state' | 'status'>): (typeof LAST_EVENTS)[number] {
  // A report received after the hand-over is the latest word on it.
  if (r.report) return r.report;
  switch (r.delivery_state) {
    case 'sent': return 'delivered';
    case 'retrying': return 'delivery_delayed';
    case 'bounced': case 'failed': case 'suppressed': case 'canceled': return r.delivery_state;
    default: return r.status;
  }
}

/** The summary fields (EmailSummary) of a stored message, as the API answers them. */
const toSummary = (r: ListedRow) => ({
  id: r.id,
  ...addressing(r),
  topic_id: r.topic_id,
  scheduled_at: r.scheduled_at?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
});

export const toEmail = (r: MessageRow) => ({
  object: 'email' as const,
  ...toSummary(r),
  html: r.html,
  text: r.text_body,
  headers: r.headers,
  tags: r.tags,
  last_event: lastEvent(r),
  attempts: r.attempts ?? [],
  suppressed: r.suppressed,
  recipient_count: r.recipient_count,
  attachments: r.attachments,
  idempotency_key: r.idempotency_key,
});

export const toListed = (r: ListedRow) => ({ ...toSummary(r), last_event: lastEvent(r) });
