// /api/v1/topics and a contact's subscriptions (/api/v1/contacts/:contact/topics), FULL keys.
import { Type } from '@sinclair/typebox';
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { Name, StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { MAIL_BODY_ERRORS, MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import { Timestamp } from '../http/mail-schemas.ts';
import { page, PageOf, PageQuery } from '../http/pagination.ts';
import { contactOf } from './contact-routes.ts';
import type { Contacts } from './contacts.ts';
import { DEFAULT_SUBSCRIPTIONS, toTopic, type Topics } from './topics.ts';

const Slug = Type.String({ pattern: '^[a-z0-9-]{1,64}$', description: '1 to 64 of a-z 0-9 -; unique in the organization.' });
const TopicSchema = Type.Object(
  {
    object: Type.Literal('topic'),
    id: Type.String(),
    slug: Type.String(),
    name: Type.String(),
    default_subscription: StringEnum(DEFAULT_SUBSCRIPTIONS, { description: 'opt_in: every contact is subscribed until it opts out; opt_out: none is until it opts in.' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Topic', title: 'Topic' },
);
const TopicList = PageOf(ref(TopicSchema), 'TopicList');
const Subscription = Type.Object(
  { topic: ref(TopicSchema), subscribed: Type.Boolean({ description: 'The effective state.' }), explicit: Type.Boolean({ description: 'The contact chose it; false: the topic\'s default applies.' }) },
  { $id: 'TopicSubscription', title: 'TopicSubscription' },
);
const SubscriptionList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ref(Subscription)) }, { $id: 'TopicSubscriptionList', title: 'TopicSubscriptionList' });
const TopicParams = Type.Object({ topic: Type.String({ description: 'The topic\'s id or slug.' }) });
const ContactTopicParams = Type.Object({ contact: Type.String({ description: 'The contact\'s id or email.' }), topic: Type.String({ description: 'The topic\'s id or slug.' }) });

export async function topicRoutes(app: App, deps: { topics: Topics; contacts: Contacts; pg: Pool }): Promise<void> {
  const { topics, contacts, pg } = deps;
  const tags = ['topics'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [TopicSchema, TopicList, Subscription, SubscriptionList]);

  const topicOf = async (organizationId: string, idOrSlug: string) => {
    const row = await topics.find(organizationId, idOrSlug);
    if (!row) throw notFound('topic');
    return row;
  };

  app.post('/topics', {
    config,
    schema: {
      tags, operationId: 'createTopic', summary: 'Create a topic',
      body: Type.Object({ slug: Slug, name: Name(120), default_subscription: StringEnum(DEFAULT_SUBSCRIPTIONS) }, { additionalProperties: false }),
      response: { 201: withRateLimitHeaders(TopicSchema, 'The new topic.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    const row = await topics.create(request.mailAuth.organizationId, request.body);
    if (!row) throw new ApiError(409, 'topic_exists', `The organization already has a topic ${request.body.slug}.`);
    return reply.status(201).send(toTopic(row));
  });

  app.get('/topics', {
    config,
    schema: { tags, operationId: 'listTopics', summary: 'List topics', querystring: PageQuery, response: { 200: withRateLimitHeaders(TopicList, 'A page of topics.'), ...mailErrorResponses(...MAIL_ERRORS, 400) } },
  }, async (request) => page(pg, { ...topics.listQuery(request.mailAuth.organizationId), ...request.query }, toTopic));

  app.get('/topics/:topic', {
    config,
    schema: { tags, operationId: 'getTopic', summary: 'Get a topic by id or slug', params: TopicParams, response: { 200: withRateLimitHeaders(TopicSchema, 'The topic.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => toTopic(await topicOf(request.mailAuth.organizationId, request.params.topic)));

  app.patch('/topics/:topic', {
    config,
    schema: {
      tags, operationId: 'updateTopic', summary: 'Change a topic\'s name or default', description: 'The slug does not change: broadcasts and unsubscribe links name it.', params: TopicParams,
      body: Type.Object({ name: Type.Optional(Name(120)), default_subscription: Type.Optional(StringEnum(DEFAULT_SUBSCRIPTIONS)) }, { additionalProperties: false, minProperties: 1 }),
      response: { 200: withRateLimitHeaders(TopicSchema, 'The topic.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await topicOf(request.mailAuth.organizationId, request.params.topic);
    return toTopic((await topics.update(row.organization_id, row.id, request.body))!);
  });

  app.delete('/topics/:topic', {
    config,
    schema: { tags, operationId: 'deleteTopic', summary: 'Delete a topic and its subscriptions', params: TopicParams, response: { 200: withRateLimitHeaders(TopicSchema, 'The deleted topic.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const row = await topicOf(request.mailAuth.organizationId, request.params.topic);
    return toTopic((await topics.delete(row.organization_id, row.id)) ?? row);
  });

  const subscriptionsOf = async (organizationId: string, contactId: string) => ({
    object: 'list' as const,
    data: (await topics.ofContact(organizationId, contactId)).map((s) => ({ topic: toTopic(s.topic), subscribed: s.subscribed, explicit: s.explicit })),
  });

  app.get('/contacts/:contact/topics', {
    config: { mailAccess: 'manage' },
    schema: { tags, operationId: 'listContactTopics', summary: 'A contact\'s state for every topic', params: Type.Object({ contact: Type.String() }), response: { 200: withRateLimitHeaders(SubscriptionList, 'Every topic of the organization, by slug.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const contact = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    return subscriptionsOf(contact.organization_id, contact.id);
  });

  app.put('/contacts/:contact/topics/:topic', {
    config,
    schema: {
      tags, operationId: 'setContactTopic', summary: 'Subscribe a contact to a topic or unsubscribe it', params: ContactTopicParams,
      body: Type.Object({ subscribed: Type.Boolean() }, { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(SubscriptionList, 'The contact\'s state for every topic.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const contact = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    const topic = await topicOf(contact.organization_id, request.params.topic);
    await topics.choose(topic.id, contact.id, request.body.subscribed);
    return subscriptionsOf(contact.organization_id, contact.id);
  });

  app.delete('/contacts/:contact/topics/:topic', {
    config,
    schema: { tags, operationId: 'resetContactTopic', summary: 'Forget a contact\'s choice: the topic\'s default applies again', params: ContactTopicParams, response: { 200: withRateLimitHeaders(SubscriptionList, 'The contact\'s state for every topic.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const contact = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    const topic = await topicOf(contact.organization_id, request.params.topic);
    await topics.forget(topic.id, contact.id);
    return subscriptionsOf(contact.organization_id, contact.id);
  });
}
