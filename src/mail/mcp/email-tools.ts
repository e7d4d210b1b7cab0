// MCP tools over single emails: send_email, get_email, list_emails and
// cancel_email, through the functions of POST /emails, GET /emails/:id,
// GET /emails and POST /emails/:id/cancel, with their schemas as arguments and
// results. Send keys and full keys use them.
import { Type } from '@sinclair/typebox';
import { describedFor, READ_ONLY, withDefault } from '../../platform/mcp/tool.ts';
import { Changed, EmailList, EmailObject } from '../emails/email-answers.ts';
import { cancelEmail, getEmail, listEmails, sendEmail, type EmailOperationDeps } from '../emails/email-operations.ts';
import { EmailFields, ListEmailsQuery } from '../emails/email-schemas.ts';
import { mailTool } from './mail-tool.ts';
import { CHANGES, idArg, pageLines, SENDS } from './tool-pieces.ts';

const SENDING = { access: 'send', kinds: ['full', 'send'] } as const;
const READING = { access: 'read_emails', kinds: ['full', 'send'] } as const;

/** POST /emails' fields an assistant sends with; headers, tags and attachments stay with REST. */
export const SendEmailArgs = Type.Object(
  {
    from: EmailFields.from,
    to: EmailFields.to,
    cc: EmailFields.cc,
    bcc: EmailFields.bcc,
    reply_to: EmailFields.reply_to,
    subject: EmailFields.subject,
    html: EmailFields.html,
    text: EmailFields.text,
    scheduled_at: EmailFields.scheduled_at,
    topic_id: EmailFields.topic_id,
    idempotency_key: describedFor(EmailFields.idempotency_key, 'Unique per organization, 1 to 256 characters: a repeat with the same key and request sends nothing and answers the first id (idempotent_replayed); the same key with another request is refused (invalid_idempotent_request).'),
  },
  { additionalProperties: false },
);

const query = ListEmailsQuery.properties;

export function emailTools(deps: EmailOperationDeps) {
  const send = mailTool(SENDING, {
    name: 'send_email',
    title: 'Send an email',
    description:
      'Sends one email (POST /emails): `from` (`email` or `Name <email>` on a verified domain of the organization that the key may use), `to` (one address or a list; ' +
      'to, cc and bcc together at most 50), `subject`, and `html` or `text` (or both). Optional: `cc`, `bcc`, `reply_to`, `scheduled_at` (ISO 8601 with an offset: ' +
      'held until then, cancel_email can still stop it), `topic_id`, `idempotency_key`. The email is queued and goes out within the daily allowances; suppressed ' +
      'recipients are left out. Returns its id, for get_email. Errors: from_domain_not_verified, domain_not_allowed, too_many_recipients, validation_failed.',
    input: SendEmailArgs,
    output: Type.Object({
      id: Type.String(),
      idempotent_replayed: Type.Boolean({ description: 'True on a repeat of an idempotency key: the id is the first email\'s and nothing new was sent.' }),
    }),
    annotations: SENDS,
    async run(args, ctx) {
      const { id, replayed } = await sendEmail(deps, ctx.grant, args);
      const when = args.scheduled_at ? `scheduled for ${args.scheduled_at}` : 'queued';
      const summary = replayed ? `Already sent with this idempotency key: email ${id}; nothing new was sent.` : `Email ${id} ${when}: "${args.subject}" from ${args.from}.`;
      return { summary, result: { id, idempotent_replayed: replayed } };
    },
  });

  const get = mailTool(READING, {
    name: 'get_email',
    title: 'Get an email and its state',
    description:
      'An email this key sent or can see (GET /emails/:id): its addresses, subject and parts, and its state: `last_event` (queued, scheduled, suppressed, canceled, ' +
      'delivered, delivery_delayed, bounced, failed, complained) and `attempts`, each hand-over to the relay with its outcome and reply. Ids come from send_email or list_emails.',
    input: Type.Object({ id: idArg('The email\'s id.') }, { additionalProperties: false }),
    output: EmailObject,
    annotations: READ_ONLY,
    async run(args, ctx) {
      const email = await getEmail(deps.messages, ctx.grant, args.id);
      const tried = email.attempts.length ? `; ${email.attempts.length} hand-over attempt${email.attempts.length === 1 ? '' : 's'}, last: ${email.attempts.at(-1)!.outcome}` : '';
      return { summary: `Email ${email.id} "${email.subject}" to ${email.to.join(', ')}: ${email.last_event}${tried}.`, result: email };
    },
  });

  const list = mailTool(READING, {
    name: 'list_emails',
    title: 'List emails',
    description:
      'A page of the organization\'s emails (of the key\'s domains, for a domain-restricted key), newest first (GET /emails), each with its addresses, subject and ' +
      '`last_event`. `limit` 1 to 100 (default 20); when `has_more`, call again with `after` set to the last id of the page for older emails (`before` with the first id goes back to newer ones).',
    input: Type.Object(
      {
        limit: withDefault(describedFor(query.limit, 'Emails per page, 1 to 100; default 20.')),
        after: describedFor(query.after, 'The id of an email of a previous page: the page holds the emails older than it.'),
        before: describedFor(query.before, 'The id of an email of a previous page: the page holds the nearest emails newer than it. Not with after.'),
      },
      { additionalProperties: false },
    ),
    output: EmailList,
    annotations: READ_ONLY,
    async run(args, ctx) {
      const page = await listEmails(deps.messages, ctx.grant, args);
      const lines = page.data.map((e) => `- ${e.id}: "${e.subject}" to ${e.to.join(', ')}, ${e.last_event} (${e.created_at})`);
      const next = page.has_more && !args.before ? `More: call list_emails with after "${page.data.at(-1)!.id}".` : undefined;
      return { summary: pageLines(lines, 'email', 'No emails.', next), result: page };
    },
  });

  const cancel = mailTool(SENDING, {
    name: 'cancel_email',
    title: 'Cancel a scheduled or queued email',
    description:
      'Cancels an email not yet handed over to the relay (POST /emails/:id/cancel): scheduled, or queued waiting for its turn, an allowance or a retry. It is never sent; ' +
      'its last_event becomes canceled. An email the sender holds at that moment or already handed over is refused with not_cancelable.',
    input: Type.Object({ id: idArg('The email\'s id (from send_email or list_emails).') }, { additionalProperties: false }),
    output: Changed,
    annotations: CHANGES,
    async run(args, ctx) {
      const result = await cancelEmail(deps.changes, ctx.grant, args.id);
      return { summary: `Canceled email ${result.id}; it will not be sent.`, result };
    },
  });

  return [send, get, list, cancel];
}
