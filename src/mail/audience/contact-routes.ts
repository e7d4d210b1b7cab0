// /api/v1/contacts (FULL keys): an organization's contacts, one per address.
import { addComponents } from '../../platform/http/components.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { MAIL_BODY_ERRORS, MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import { page } from '../http/pagination.ts';
import { contactEmail, propertiesProblem, type PropertyValue } from './contact-fields.ts';
import { ContactList, ContactParams, ContactSchema, CreateContactBody, ListContactsQuery, UpdateContactBody } from './contact-schemas.ts';
import { toContact, type ContactRow, type Contacts } from './contacts.ts';

const contactExists = () => new ApiError(409, 'contact_exists', 'The organization already has a contact with this email address.');

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
      body: CreateContactBody,
      response: { 201: withRateLimitHeaders(ContactSchema, 'The new contact.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    checkProperties(request.body.properties);
    const row = await contacts.create(request.mailAuth.organizationId, { ...request.body, email: checkedEmail(request.body.email) });
    if (!row) throw contactExists();
    return reply.status(201).send(toContact(row));
  });

  app.get('/contacts', {
    config,
    schema: {
      tags, operationId: 'listContacts', summary: 'List contacts', description: 'Newest first; `email` and `status` narrow the list.',
      querystring: ListContactsQuery,
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
      body: UpdateContactBody,
      response: { 200: withRateLimitHeaders(ContactSchema, 'The contact.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404, 409) },
    },
  }, async (request) => {
    const row = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    checkProperties(request.body.properties);
    const email = request.body.email === undefined ? undefined : checkedEmail(request.body.email);
    const changed = await contacts.update(row.organization_id, row.id, { ...request.body, email });
    if (changed === 'contact_exists') throw contactExists();
    return toContact(changed!);
  });

  app.delete('/contacts/:contact', {
    config,
    schema: { tags, operationId: 'deleteContact', summary: 'Delete a contact', params: ContactParams, response: { 200: withRateLimitHeaders(ContactSchema, 'The deleted contact.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const row = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    return toContact((await contacts.delete(row.organization_id, row.id)) ?? row);
  });
}
