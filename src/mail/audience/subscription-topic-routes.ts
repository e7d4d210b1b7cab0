// /api/v1/topics (subscription topics) and a contact's subscriptions
// (/api/v1/contacts/:contact/topics), FULL keys.
import { subscriptionTopicOf } from './subscription-topic-operations.ts';
import { addComponents } from '../../platform/http/components.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import { MAIL_BODY_ERRORS, MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import { PageQuery } from '../http/pagination.ts';
import { contactOf } from './contact-operations.ts';
import type { Contacts } from './contacts.ts';
import { toSubscriptionTopic, type SubscriptionTopics } from './subscription-topics.ts';
import {
  ChooseTopicBody, ContactParams, ContactTopicParams, CreateTopicBody, Subscription, SubscriptionList, TopicList, TopicParams, TopicSchema, UpdateTopicBody,
} from './subscription-topic-schemas.ts';

export async function subscriptionTopicRoutes(app: App, deps: { subscriptionTopics: SubscriptionTopics; contacts: Contacts }): Promise<void> {
  const { subscriptionTopics, contacts } = deps;
  const tags = ['topics'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [TopicSchema, TopicList, Subscription, SubscriptionList]);

  const topicOf = (organizationId: string, idOrSlug: string) => subscriptionTopicOf(subscriptionTopics, organizationId, idOrSlug);

  app.post('/topics', {
    config,
    schema: {
      tags, operationId: 'createTopic', summary: 'Create a topic',
      body: CreateTopicBody,
      response: { 201: withRateLimitHeaders(TopicSchema, 'The new topic.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    const row = await subscriptionTopics.create(request.mailAuth.organizationId, request.body);
    if (!row) throw new ApiError(409, 'topic_exists', `The organization already has a topic ${request.body.slug}.`);
    return reply.status(201).send(toSubscriptionTopic(row));
  });

  app.get('/topics', {
    config,
    schema: { tags, operationId: 'listTopics', summary: 'List topics', querystring: PageQuery, response: { 200: withRateLimitHeaders(TopicList, 'A page of topics.'), ...mailErrorResponses(...MAIL_ERRORS, 400) } },
  }, async (request) => subscriptionTopics.list(request.mailAuth.organizationId, request.query, toSubscriptionTopic));

  app.get('/topics/:topic', {
    config,
    schema: { tags, operationId: 'getTopic', summary: 'Get a topic by id or slug', params: TopicParams, response: { 200: withRateLimitHeaders(TopicSchema, 'The topic.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => toSubscriptionTopic(await topicOf(request.mailAuth.organizationId, request.params.topic)));

  app.patch('/topics/:topic', {
    config,
    schema: {
      tags, operationId: 'updateTopic', summary: 'Change a topic\'s name or default', description: 'The slug does not change: broadcasts and unsubscribe links name it.', params: TopicParams,
      body: UpdateTopicBody,
      response: { 200: withRateLimitHeaders(TopicSchema, 'The topic.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await topicOf(request.mailAuth.organizationId, request.params.topic);
    return toSubscriptionTopic((await subscriptionTopics.update(row.organization_id, row.id, request.body))!);
  });

  app.delete('/topics/:topic', {
    config,
    schema: { tags, operationId: 'deleteTopic', summary: 'Delete a topic and its subscriptions', params: TopicParams, response: { 200: withRateLimitHeaders(TopicSchema, 'The deleted topic.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const row = await topicOf(request.mailAuth.organizationId, request.params.topic);
    return toSubscriptionTopic((await subscriptionTopics.delete(row.organization_id, row.id)) ?? row);
  });

  const subscriptionsOf = async (organizationId: string, contactId: string) => ({
    object: 'list' as const,
    data: (await subscriptionTopics.ofContact(organizationId, contactId)).map((s) => ({ topic: toSubscriptionTopic(s.topic), subscribed: s.subscribed, explicit: s.explicit })),
  });

  app.get('/contacts/:contact/topics', {
    config: { mailAccess: 'manage' },
    schema: { tags, operationId: 'listContactTopics', summary: 'A contact\'s state for every topic', params: ContactParams, response: { 200: withRateLimitHeaders(SubscriptionList, 'Every topic of the organization, by slug.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const contact = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    return subscriptionsOf(contact.organization_id, contact.id);
  });

  app.put('/contacts/:contact/topics/:topic', {
    config,
    schema: {
      tags, operationId: 'setContactTopic', summary: 'Subscribe a contact to a topic or unsubscribe it', params: ContactTopicParams,
      body: ChooseTopicBody,
      response: { 200: withRateLimitHeaders(SubscriptionList, 'The contact\'s state for every topic.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const contact = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    const topic = await topicOf(contact.organization_id, request.params.topic);
    await subscriptionTopics.choose(topic.id, contact.id, request.body.subscribed);
    return subscriptionsOf(contact.organization_id, contact.id);
  });

  app.delete('/contacts/:contact/topics/:topic', {
    config,
    schema: { tags, operationId: 'resetContactTopic', summary: 'Forget a contact\'s choice: the topic\'s default applies again', params: ContactTopicParams, response: { 200: withRateLimitHeaders(SubscriptionList, 'The contact\'s state for every topic.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const contact = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    const topic = await topicOf(contact.organization_id, request.params.topic);
    await subscriptionTopics.forget(topic.id, contact.id);
    return subscriptionsOf(contact.organization_id, contact.id);
  });
}
