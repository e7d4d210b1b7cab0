// /api/v1/contacts (FULL keys): an organization's contacts, one per address.
import { addComponents } from '../../platform/http/components.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { MAIL_BODY_ERRORS, MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import { contactOf, createContact, deleteContact, listContacts, updateContact } from './contact-operations.ts';
import { ContactList, ContactParams, ContactSchema, CreateContactBody, ListContactsQuery, UpdateContactBody } from './contact-schemas.ts';
import type { ContactProperties } from './contact-properties.ts';
import { toContact, type Contacts } from './contacts.ts';

export async function contactRoutes(app: App, deps: { contacts: Contacts; contactProperties: ContactProperties; pg: Pool }): Promise<void> {
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
  }, async (request, reply) => reply.status(201).send(await createContact(deps, request.mailAuth.organizationId, request.body)));

  app.get('/contacts', {
    config,
    schema: {
      tags, operationId: 'listContacts', summary: 'List contacts', description: 'Newest first; `email` and `status` narrow the list.',
      querystring: ListContactsQuery,
      response: { 200: withRateLimitHeaders(ContactList, 'A page of contacts.'), ...mailErrorResponses(...MAIL_ERRORS, 400) },
    },
  }, async (request) => listContacts(pg, contacts, request.mailAuth.organizationId, request.query));

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
  }, async (request) => updateContact(deps, request.mailAuth.organizationId, request.params.contact, request.body));

  app.delete('/contacts/:contact', {
    config,
    schema: { tags, operationId: 'deleteContact', summary: 'Delete a contact', params: ContactParams, response: { 200: withRateLimitHeaders(ContactSchema, 'The deleted contact.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => deleteContact(contacts, request.mailAuth.organizationId, request.params.contact));
}
