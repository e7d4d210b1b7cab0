// MCP tools over the audience: add_contact, list_contacts and update_contact,
// through the functions of POST, GET and PATCH /api/v1/contacts, with their
// schemas as arguments and results. Full keys use them.
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../platform/http/errors.ts';
import { CREATES, describedFor, READ_ONLY, withDefault } from '../../platform/mcp/tool.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { createContact, listContacts, updateContact } from '../audience/contact-operations.ts';
import { ContactList, ContactParams, ContactSchema, CreateContactBody, ListContactsQuery, UpdateContactBody } from '../audience/contact-schemas.ts';
import type { ContactProperties } from '../audience/contact-properties.ts';
import { statusOf } from '../audience/resend-contact-fields.ts';
import type { Contact, Contacts } from '../audience/contacts.ts';
import { mailTool } from './mail-tool.ts';
import { CHANGES, pageLines } from './tool-pieces.ts';

const MANAGING = { access: 'manage', kinds: ['full'] } as const;

const query = ListContactsQuery.properties;
const change = UpdateContactBody.properties;

const name = (c: Contact) => [c.first_name, c.last_name].filter(Boolean).join(' ');
const contactLine = (c: Contact) => `- ${c.email}${name(c) ? ` (${name(c)})` : ''}, id ${c.id}, ${c.status}`;

/** PATCH /api/v1/contacts/:contact as one argument list: the contact, then the REST body's fields. */
export const UpdateContactArgs = Type.Object(
  {
    contact: describedFor(ContactParams.properties.contact, 'The contact\'s id or email address.'),
    email: describedFor(change.email, 'A new address (lower-cased; must not be another contact\'s).'),
    first_name: change.first_name,
    last_name: change.last_name,
    properties: describedFor(change.properties, 'Replaces the contact\'s properties as a whole (flat: names of 1 to 64 of A-Z a-z 0-9 _ -; values strings, numbers, booleans or null).'),
    status: describedFor(change.status, 'unsubscribed: the contact gets no broadcast of any topic; subscribed: it does again, as its topic choices say.'),
    unsubscribed: Type.Optional(Type.Boolean({ description: 'Resend\'s name for the status, as Resend\'s MCP server takes it: true is status unsubscribed, false subscribed.' })),
  },
  { additionalProperties: false },
);

export function contactTools(deps: { contacts: Contacts; contactProperties: ContactProperties; pg: Pool }) {
  const add = mailTool(MANAGING, {
    name: 'add_contact',
    title: 'Add a contact',
    description:
      'Adds a contact to the organization\'s audience (POST /api/v1/contacts): `email`, optional `first_name`, `last_name`, `properties` (flat values for ' +
      '{{contact.<property>}} in broadcasts) and `status` (subscribed by default). A contact gets a broadcast of a topic when subscribed, subscribed to the topic ' +
      '(its choice, or the topic\'s default) and not suppressed. Errors: contact_exists, invalid_email, invalid_properties.',
    input: CreateContactBody,
    output: ContactSchema,
    annotations: CREATES,
    async run(args, ctx) {
      const contact = await createContact(deps, ctx.grant.organizationId, args);
      return { summary: `Added contact ${contact.email} (id ${contact.id}), ${contact.status}.`, result: contact };
    },
  });

  const list = mailTool(MANAGING, {
    name: 'list_contacts',
    title: 'List or find contacts',
    description:
      'A page of the organization\'s contacts, newest first (GET /api/v1/contacts); `email` finds the contact with that address, `status` narrows to subscribed or ' +
      'unsubscribed ones. `limit` 1 to 100 (default 20); when `next_cursor` is not null, pass it back as `cursor` with the same filters for the next page.',
    input: Type.Object(
      {
        email: describedFor(query.email, 'Only the contact with this address (case-insensitive).'),
        status: query.status,
        limit: withDefault(describedFor(query.limit, 'Contacts per page, 1 to 100; default 20.')),
        cursor: describedFor(query.cursor, 'next_cursor of the previous page, unchanged.'),
      },
      { additionalProperties: false },
    ),
    output: ContactList,
    annotations: READ_ONLY,
    async run(args, ctx) {
      const page = await listContacts(deps.pg, deps.contacts, ctx.grant.organizationId, args);
      const next = page.next_cursor ? `More: call list_contacts again with cursor "${page.next_cursor}".` : undefined;
      return { summary: pageLines(page.data.map(contactLine), 'contact', 'No contacts match.', next), result: page };
    },
  });

  const update = mailTool(MANAGING, {
    name: 'update_contact',
    title: 'Change a contact',
    description:
      'Changes a contact named by `contact` (its id or email address; PATCH /api/v1/contacts/:contact): its `first_name`, `last_name`, `properties` (replaced as a whole), ' +
      '`status` (unsubscribed: no broadcast of any topic; or `unsubscribed` true or false, as Resend names it) or `email`. Give at least one change. Errors: not_found, contact_exists, invalid_email, invalid_properties.',
    input: UpdateContactArgs,
    output: ContactSchema,
    annotations: CHANGES,
    async run(args, ctx) {
      const { contact, unsubscribed, ...rest } = args;
      const status = statusOf(unsubscribed);
      if (status && rest.status && status !== rest.status) {
        throw new ApiError(400, 'validation_failed', `Invalid arguments for update_contact: unsubscribed ${unsubscribed} contradicts status ${rest.status}.`, [{ path: '/unsubscribed', message: 'contradicts status' }]);
      }
      const body = { ...rest, ...(status ? { status } : {}) };
      // The REST body's rule (minProperties 1), said for the tool's arguments.
      if (Object.keys(body).length === 0) {
        throw new ApiError(400, 'validation_failed', 'Invalid arguments for update_contact: give at least one change (first_name, last_name, properties, status, unsubscribed or email).', [{ path: '', message: 'must NOT have fewer than 1 properties' }]);
      }
      const changed = await updateContact(deps, ctx.grant.organizationId, contact, body);
      return { summary: `Changed contact ${changed.email} (id ${changed.id}): ${changed.status}${name(changed) ? `, ${name(changed)}` : ''}.`, result: changed };
    },
  });

  return [add, list, update];
}
