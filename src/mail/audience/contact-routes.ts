// /api/v1/contacts (FULL keys): an organization's contacts, one per address.
import { Type } from '@sinclair/typebox';
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { MAIL_BODY_ERRORS, MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import { Timestamp } from '../http/mail-schemas.ts';
import { page, PageOf, PageQuery } from '../http/pagination.ts';
import { CONTACT_STATUSES, contactEmail, MAX_NAME, propertiesProblem, type PropertyValue } from './contact-fields.ts';
import { toContact, type ContactRow, type Contacts } from './contacts.ts';

const PropertyValueSchema = Type.Union([Type.String({ maxLength: 4096 }), Type.Number(), Type.Boolean(), Type.Null()]);
const Properties = Type.Record(Type.String(), PropertyValueSchema, { description: 'Flat: names of 1 to 64 of A-Z a-z 0-9 _ -, at most 100, 16 KB as JSON; values strings, numbers, booleans or null.' });
const PersonName = Type.Union([Type.String({ maxLength: MAX_NAME }), Type.Null()]);

export const ContactSchema = Type.Object(
  {
    object: Type.Literal('contact'),
    id: Type.String(),
    email: Type.String({ description: 'Lower-cased; unique in the organization.' }),
    first_name: Type.Union([Type.String(), Type.Null()]),
    last_name: Type.Union([Type.String(), Type.Null()]),
    properties: Type.Record(Type.String(), PropertyValueSchema),
    status: StringEnum(CONTACT_STATUSES, { description: 'unsubscribed: receives no broadcast of any topic.' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Contact', title: 'Contact' },
);
const ContactList = PageOf(ref(ContactSchema), 'ContactList');
export const ContactParams = Type.Object({ contact: Type.String({ description: 'The contact\'s id or email address.' }) });

/** The contact of the path (id or address), or 404. */
export async function contactOf(contacts: Contacts, organizationId: string, idOrEmail: string): Promise<ContactRow> {
  const row = idOrEmail.includes('@') || isUuid(idOrEmail) ? await contacts.find(organizationId, idOrEmail) : undefined;
  if (!row) throw notFound('contact');
  return row;
}

function checkProperties(properties: Record<string, PropertyValue> | undefined): void {
  const problem = properties && propertiesProblem(properties);
  if (problem) throw new ApiError(400, 'invalid_properties', problem, [{ path: '/properties', message: problem }]);
}

function checkedEmail(value: string): string {
  const email = contactEmail(value);
  if (!email) throw new ApiError(400, 'invalid_email', 'email is not an email address.', [{ path: '/email', message: 'not an email address' }]);
  return email;
}

export async function contactRoutes(app: App, deps: { contacts: Contacts; pg: Pool }): Promise<void> {
  const { contacts, pg } = deps;
  const tags = ['contacts'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [ContactSchema, ContactList]);

  app.post('/contacts', {
    config,
    schema: {
      tags, operationId: 'createContact', summary: 'Create a contact',
      body: Type.Object({ email: Type.String({ maxLength: 254 }), first_name: Type.Optional(PersonName), last_name: Type.Optional(PersonName), properties: Type.Optional(Properties), status: Type.Optional(StringEnum(CONTACT_STATUSES, { default: 'subscribed' })) }, { additionalProperties: false }),
      response: { 201: withRateLimitHeaders(ContactSchema, 'The new contact.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    checkProperties(request.body.properties);
    const row = await contacts.create(request.mailAuth.organizationId, { ...request.body, email: checkedEmail(request.body.email) });
    if (!row) throw new ApiError(409, 'contact_exists', 'The organization already has a contact with this email address.');
    return reply.status(201).send(toContact(row));
  });

  app.get('/contacts', {
    config,
    schema: {
      tags, operationId: 'listContacts', summary: 'List contacts', description: 'Newest first; `email` and `status` narrow the list.',
      querystring: Type.Composite([PageQuery, Type.Object({ email: Type.Optional(Type.String({ maxLength: 254 })), status: Type.Optional(StringEnum(CONTACT_STATUSES)) })], { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(ContactList, 'A page of contacts.'), ...mailErrorResponses(...MAIL_ERRORS, 400) },
    },
  }, async (request) => page(pg, { ...contacts.listQuery(request.mailAuth.organizationId, request.query), limit: request.query.limit, cursor: request.query.cursor }, toContact));

  app.get('/contacts/:contact', {
    config,
    schema: { tags, operationId: 'getContact', summary: 'Get a contact by id or email', params: ContactParams, response: { 200: withRateLimitHeaders(ContactSchema, 'The contact.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => toContact(await contactOf(contacts, request.mailAuth.organizationId, request.params.contact)));

  app.patch('/contacts/:contact', {
    config,
    schema: {
      tags, operationId: 'updateContact', summary: 'Change a contact', description: 'Changes the fields sent; `properties` replaces the contact\'s properties as a whole.',
      params: ContactParams,
      body: Type.Object({ email: Type.Optional(Type.String({ maxLength: 254 })), first_name: Type.Optional(PersonName), last_name: Type.Optional(PersonName), properties: Type.Optional(Properties), status: Type.Optional(StringEnum(CONTACT_STATUSES)) }, { additionalProperties: false, minProperties: 1 }),
      response: { 200: withRateLimitHeaders(ContactSchema, 'The contact.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404, 409) },
    },
  }, async (request) => {
    const row = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    checkProperties(request.body.properties);
    const email = request.body.email === undefined ? undefined : checkedEmail(request.body.email);
    try {
      return toContact((await contacts.update(row.organization_id, row.id, { ...request.body, email }))!);
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new ApiError(409, 'contact_exists', 'The organization already has a contact with this email address.');
      throw err;
    }
  });

  app.delete('/contacts/:contact', {
    config,
    schema: { tags, operationId: 'deleteContact', summary: 'Delete a contact', params: ContactParams, response: { 200: withRateLimitHeaders(ContactSchema, 'The deleted contact.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const row = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    return toContact((await contacts.delete(row.organization_id, row.id)) ?? row);
  });
}
