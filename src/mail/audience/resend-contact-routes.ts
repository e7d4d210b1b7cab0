// Resend's /contacts at the root, by id or by email, over the same contacts and
// operations as /api/v1/contacts (contact-operations.ts): create (with segments
// and topics), get, update, remove, list. A contact's segments and topics have
// their own routes (resend-contact-segment-routes.ts, resend-contact-topic-routes.ts).
import { Type } from '@sinclair/typebox';
import { addComponents } from '../../platform/http/components.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { RESEND_BODY_ERRORS, RESEND_ERRORS, resendErrorResponses } from '../resend/resend-errors.ts';
import { resendPage, ResendPageQuery } from '../resend/resend-pages.ts';
import { MAX_NAME } from './contact-fields.ts';
import { contactOf, createContact, deleteContact, updateContact } from './contact-operations.ts';
import type { ContactProperties } from './contact-properties.ts';
import type { ContactRow, Contacts } from './contacts.ts';
import { statusOf, withoutNulls } from './resend-contact-fields.ts';
import { ResendContact, ResendContactItem, ResendContactList, toResendContact, toResendContactItem } from './resend-contact-shape.ts';
import { Segments } from './segments.ts';
import { DEFAULT_SUBSCRIPTIONS, type SubscriptionTopics } from './subscription-topics.ts';

const PersonName = Type.Union([Type.String({ maxLength: MAX_NAME }), Type.Null()]);
const Properties = Type.Record(Type.String(), Type.Union([Type.String({ maxLength: 4096 }), Type.Number(), Type.Boolean(), Type.Null()]));
const ResendContactRef = Type.Object({ object: Type.Literal('contact'), id: Type.String() }, { $id: 'ResendContactRef', title: 'ResendContactRef' });
const ResendContactRemoved = Type.Object(
  { object: Type.Literal('contact'), id: Type.String(), contact: Type.String({ description: 'The id again, as Resend names it.' }), deleted: Type.Literal(true) },
  { $id: 'ResendContactRemoved', title: 'ResendContactRemoved' },
);
export const ContactParams = Type.Object({ contact: Type.String({ maxLength: 254, description: 'The contact\'s id or email address.' }) });

export interface ResendContactDeps {
  contacts: Contacts;
  contactProperties: ContactProperties;
  subscriptionTopics: SubscriptionTopics;
  pg: Pool;
}

export async function resendContactRoutes(app: App, deps: ResendContactDeps): Promise<void> {
  const { contacts, contactProperties, subscriptionTopics, pg } = deps;
  const segments = new Segments(pg);
  const tags = ['resend-contacts'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [ResendContactItem, ResendContact, ResendContactList, ResendContactRef, ResendContactRemoved]);

  app.post('/contacts', {
    config,
    schema: {
      tags, operationId: 'resendCreateContact', summary: 'Create a contact (Resend\'s contacts.create)',
      description: 'With the segments it joins and its choice for topics. A segment or topic that is not the organization\'s is 422 segment_not_found or topic_not_found, and nothing is made.',
      body: Type.Object({
        email: Type.String({ maxLength: 254 }),
        first_name: Type.Optional(PersonName),
        last_name: Type.Optional(PersonName),
        unsubscribed: Type.Optional(Type.Boolean()),
        properties: Type.Optional(Properties),
        segments: Type.Optional(Type.Array(Type.Object({ id: Type.String({ maxLength: 100 }) }, { additionalProperties: false }), { maxItems: 100 })),
        topics: Type.Optional(Type.Array(Type.Object({ id: Type.String({ maxLength: 100 }), subscription: StringEnum(DEFAULT_SUBSCRIPTIONS) }, { additionalProperties: false }), { maxItems: 100 })),
      }, { additionalProperties: false }),
      response: { 201: withRateLimitHeaders(ResendContactRef, 'The new contact.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    const organizationId = request.mailAuth.organizationId;
    const body = request.body;
    const properties = body.properties ?? {};
    // Every segment and topic is checked first; the contact, its memberships and choices are then written in one statement.
    const joins = await Promise.all((body.segments ?? []).map(async (s, i) => {
      const row = await segments.get(organizationId, s.id);
      if (!row) throw new ApiError(422, 'segment_not_found', `Segment ${s.id} is not a segment of this organization.`, [{ path: `/segments/${i}/id`, message: 'not found' }]);
      return row;
    }));
    const choices = await Promise.all((body.topics ?? []).map(async (t, i) => {
      const row = await subscriptionTopics.find(organizationId, t.id);
      if (!row) throw new ApiError(422, 'topic_not_found', `Topic ${t.id} is not a topic of this organization.`, [{ path: `/topics/${i}/id`, message: 'not found' }]);
      return { topicId: row.id, subscribed: t.subscription === 'opt_in' };
    }));
    const status = statusOf(body.unsubscribed);
    const contact = await createContact({ contacts, contactProperties }, organizationId, {
      email: body.email,
      ...(body.first_name !== undefined ? { first_name: body.first_name } : {}),
      ...(body.last_name !== undefined ? { last_name: body.last_name } : {}),
      properties: withoutNulls(properties),
      ...(status ? { status } : {}),
    }, { segments: [...new Set(joins.map((segment) => segment.id))], topics: [...new Map(choices.map((c) => [c.topicId, c])).values()] });
    return reply.status(201).send({ object: 'contact' as const, id: contact.id });
  });

  app.get('/contacts', {
    config,
    schema: { tags, operationId: 'resendListContacts', summary: 'List contacts', querystring: ResendPageQuery, response: { 200: withRateLimitHeaders(ResendContactList, 'Newest first.'), ...resendErrorResponses(...RESEND_ERRORS, 400) } },
  }, async (request) => resendPage<ContactRow, ReturnType<typeof toResendContactItem>>(pg, contacts.listQuery(request.mailAuth.organizationId, {}), request.query, toResendContactItem));

  app.get('/contacts/:contact', {
    config,
    schema: { tags, operationId: 'resendGetContact', summary: 'Get a contact by id or email', params: ContactParams, response: { 200: withRateLimitHeaders(ResendContact, 'The contact.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const row = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    return toResendContact(row, await contactProperties.all(row.organization_id));
  });

  app.patch('/contacts/:contact', {
    config,
    schema: {
      tags, operationId: 'resendUpdateContact', summary: 'Change a contact by id or email',
      description: 'properties are merged into the contact\'s (null removes one).',
      params: ContactParams,
      body: Type.Object({ first_name: Type.Optional(PersonName), last_name: Type.Optional(PersonName), unsubscribed: Type.Optional(Type.Boolean()), properties: Type.Optional(Properties) }, { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(ResendContactRef, 'Updated.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    const { first_name, last_name, unsubscribed, properties } = request.body;
    const status = statusOf(unsubscribed);
    const change = {
      ...(first_name !== undefined ? { first_name } : {}),
      ...(last_name !== undefined ? { last_name } : {}),
      ...(status ? { status } : {}),
    };
    // The properties are merged in the store, under the contact's row lock: two updates at once keep both.
    if (Object.keys(change).length > 0 || properties) await updateContact({ contacts, contactProperties }, row.organization_id, row.id, change, properties);
    return { object: 'contact' as const, id: row.id };
  });

  app.delete('/contacts/:contact', {
    config,
    schema: { tags, operationId: 'resendRemoveContact', summary: 'Remove a contact by id or email', params: ContactParams, response: { 200: withRateLimitHeaders(ResendContactRemoved, 'Removed.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const removed = await deleteContact(contacts, request.mailAuth.organizationId, request.params.contact);
    return { object: 'contact' as const, id: removed.id, contact: removed.id, deleted: true as const };
  });
}
