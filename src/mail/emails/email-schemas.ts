// The TypeBox schemas of /emails requests: the body of POST /emails and of each
// item of POST /emails/batch, in Resend's snake_case shape (what the `resend` SDK
// sends), checked by schema (the rules a schema cannot say are in
// prepare-message.ts), the list's query and the reschedule body. The answers
// are in email-answers.ts.
import { Type, type Static } from '@sinclair/typebox';

export const MAX_RECIPIENTS = 50;
export const MAX_PART_BYTES = 2 * 1024 * 1024;

// Recipient lists have no maxItems: more than MAX_RECIPIENTS (to, cc and bcc together) is
// 400 too_many_recipients from prepare-message.ts, not a schema failure.
const Addresses = (description: string, maxItems?: number) =>
  Type.Union([Type.String({ maxLength: 512 }), Type.Array(Type.String({ maxLength: 512 }), maxItems === undefined ? {} : { maxItems })], { description });
const TagPart = Type.String({ minLength: 1, maxLength: 256, pattern: '^[A-Za-z0-9_-]+$' });

export const Attachment = Type.Object(
  {
    content: Type.Optional(Type.String({ description: 'The file, base64-encoded.' })),
    filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    path: Type.Optional(Type.String({ description: 'Not supported: attachments are sent as content.' })),
    content_type: Type.Optional(Type.String({ maxLength: 255 })),
    content_id: Type.Optional(Type.String({ maxLength: 255, description: 'For inline images (cid:).' })),
  },
  { additionalProperties: false },
);

export const EmailFields = {
  from: Type.String({ minLength: 3, maxLength: 512, description: '`email` or `Name <email>`, on a verified domain of the organization that the key may use.' }),
  to: Addresses('One address or up to 50; to, cc and bcc together at most 50.'),
  cc: Type.Optional(Addresses('Carbon copy.')),
  bcc: Type.Optional(Addresses('Blind carbon copy.')),
  reply_to: Type.Optional(Addresses('Reply-To addresses, at most 50.', MAX_RECIPIENTS)),
  subject: Type.String({ minLength: 1, maxLength: 998, pattern: '^[^\\r\\n]*$', description: '1 to 998 characters, no line breaks.' }),
  html: Type.Optional(Type.String({ description: 'At most 2 MB (UTF-8).' })),
  text: Type.Optional(Type.String({ description: 'At most 2 MB (UTF-8). At least one of html and text.' })),
  headers: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 128, pattern: '^[!-9;-~]+$' }), Type.String({ maxLength: 998, pattern: '^[^\\r\\n]*$' }), { maxProperties: 50, description: 'Extra headers; those the service sets itself (From, To, Subject, Message-ID, List-Unsubscribe…) are refused.' })),
  tags: Type.Optional(Type.Array(Type.Object({ name: TagPart, value: TagPart }, { additionalProperties: false }), { maxItems: 50, description: 'Resend\'s tags: ASCII letters, digits, _ and -.' })),
  scheduled_at: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'ISO 8601 with an offset, or English as Resend takes it ("in 1 hour", "tomorrow at 9am", in UTC: send-time.ts); the sender holds the message until then.' })),
  topic_id: Type.Optional(Type.Union([Type.String({ maxLength: 128 }), Type.Null()], { description: 'A topic the message is about; stored and published with it.' })),
  template: Type.Optional(Type.Object(
    {
      id: Type.String({ minLength: 1, maxLength: 128, description: 'The template\'s id or alias (slug); its newest published version is sent.' }),
      variables: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Union([Type.String({ maxLength: 4096 }), Type.Number()]), { maxProperties: 100, description: 'Values of its {{{VARIABLES}}}.' })),
    },
    { additionalProperties: false, description: 'Resend\'s template: its subject, From and Reply-To unless given here, and its html and text with the variables filled; not with html or text.' },
  )),
  idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Used when no Idempotency-Key header is sent (the header wins); in a batch, each item\'s own key.' })),
};

/** From and subject may come from a template: their absence without one is refused by prepare-message.ts. */
const SendFields = { ...EmailFields, from: Type.Optional(EmailFields.from), subject: Type.Optional(EmailFields.subject) };

export const SendEmailBody = Type.Object(
  { ...SendFields, attachments: Type.Optional(Type.Array(Attachment, { maxItems: 20, description: 'At most 20 files, 40 MB in all (decoded).' })) },
  { additionalProperties: false, $id: 'SendEmail', title: 'SendEmail' },
);
/** A batch item: the same fields without attachments (as Resend's batch). */
export const BatchEmailItem = Type.Object(SendFields, { additionalProperties: false, $id: 'BatchEmail', title: 'BatchEmail' });

export type SendEmailInput = Static<typeof SendEmailBody>;

export const ListEmailsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Emails per page (1 to 100, default 20).' })),
    after: Type.Optional(Type.String({ maxLength: 64, description: 'The id of an email of a previous page: the page holds the emails older than it.' })),
    before: Type.Optional(Type.String({ maxLength: 64, description: 'The id of an email of a previous page: the page holds the emails newer than it (the nearest ones). Not with after.' })),
  },
  { additionalProperties: false },
);
export const UpdateEmailBody = Type.Object(
  { scheduled_at: Type.String({ minLength: 1, maxLength: 100, description: 'ISO 8601 with an offset, or English as on send ("in 1 hour"): the new time; a time past or now sends it at once.' }) },
  { additionalProperties: false, $id: 'UpdateEmail', title: 'UpdateEmail' },
);
