// Resend's contacts.topics: a contact's state for every topic (its choice, else
// the topic's default) and choosing opt_in or opt_out for some, over the same
// subscriptions as /api/v1/contacts/:contact/topics.
import { Type } from '@sinclair/typebox';
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { RESEND_BODY_ERRORS, RESEND_ERRORS, resendErrorResponses } from '../resend/resend-errors.ts';
import { resendPage, ResendListOf, ResendPageQuery } from '../resend/resend-pages.ts';
import { contactOf } from './contact-operations.ts';
import type { Contacts } from './contacts.ts';
import { ContactParams } from './resend-contact-routes.ts';
import { DEFAULT_SUBSCRIPTIONS, type SubscriptionTopicRow, type SubscriptionTopics } from './subscription-topics.ts';

const ResendContactTopic = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    subscription: StringEnum(DEFAULT_SUBSCRIPTIONS, { description: 'The contact\'s state: its choice, else the topic\'s default.' }),
  },
  { $id: 'ResendContactTopic', title: 'ResendContactTopic' },
);
const ResendContactTopicList = ResendListOf(ref(ResendContactTopic), 'ResendContactTopicList');
const ResendContactTopicsUpdated = Type.Object({ id: Type.String({ description: 'The contact.' }) }, { $id: 'ResendContactTopicsUpdated', title: 'ResendContactTopicsUpdated' });

const toResendContactTopic = (r: SubscriptionTopicRow & { subscribed: boolean }) => ({ id: r.id, name: r.name, description: r.description, subscription: r.subscribed ? 'opt_in' as const : 'opt_out' as const });

export async function resendContactTopicRoutes(app: App, deps: { contacts: Contacts; subscriptionTopics: SubscriptionTopics; pg: Pool }): Promise<void> {
  const { contacts, subscriptionTopics, pg } = deps;
  const tags = ['resend-contacts'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [ResendContactTopic, ResendContactTopicList, ResendContactTopicsUpdated]);

  app.get('/contacts/:contact/topics', {
    config,
    schema: { tags, operationId: 'resendListContactTopics', summary: 'A contact\'s state for every topic', params: ContactParams, querystring: ResendPageQuery, response: { 200: withRateLimitHeaders(ResendContactTopicList, 'Newest topic first.'), ...resendErrorResponses(...RESEND_ERRORS, 400, 404) } },
  }, async (request) => {
    const contact = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    return resendPage(pg, subscriptionTopics.ofContactQuery(contact.organization_id, contact.id), request.query, toResendContactTopic);
  });

  app.patch('/contacts/:contact/topics', {
    config,
    schema: {
      tags, operationId: 'resendUpdateContactTopics', summary: 'Opt a contact in or out of topics',
      description: 'Every topic is checked first: one that is not the organization\'s is 422 topic_not_found and nothing changes.',
      params: ContactParams,
      body: Type.Array(Type.Object({ id: Type.String({ maxLength: 100 }), subscription: StringEnum(DEFAULT_SUBSCRIPTIONS) }, { additionalProperties: false }), { minItems: 1, maxItems: 100 }),
      response: { 200: withRateLimitHeaders(ResendContactTopicsUpdated, 'Chosen.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const contact = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    const choices = await Promise.all(request.body.map(async (t, i) => {
      const topic = await subscriptionTopics.find(contact.organization_id, t.id);
      if (!topic) throw new ApiError(422, 'topic_not_found', `Topic ${t.id} is not a topic of this organization.`, [{ path: `/${i}/id`, message: 'not found' }]);
      return { topicId: topic.id, subscribed: t.subscription === 'opt_in' };
    }));
    // All in one transaction, one choice per topic (the last given wins, as Resend applies them in order).
    const outcome = await subscriptionTopics.chooseAll(contact.organization_id, contact.id, [...new Map(choices.map((c) => [c.topicId, c])).values()]);
    if (outcome === 'topic_gone') throw new ApiError(422, 'topic_not_found', 'A topic was deleted meanwhile; nothing changed.', [{ path: '', message: 'a topic was deleted' }]);
    if (outcome === 'contact_gone') throw new ApiError(404, 'not_found', 'The contact was deleted meanwhile.');
    return { id: contact.id };
  });
}
