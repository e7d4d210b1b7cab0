// Resend's /topics at the root, over the same topics as /api/v1/topics: created
// without a slug (one is derived from the name: topic-slug.ts), with a
// description; paths take the id (or the slug).
import { subscriptionTopicOf } from './subscription-topic-operations.ts';
import { Type } from '@sinclair/typebox';
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { Name, StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import { Timestamp } from '../http/mail-schemas.ts';
import { RESEND_BODY_ERRORS, RESEND_ERRORS, resendErrorResponses } from '../resend/resend-errors.ts';
import { resendPage, ResendListOf, ResendPageQuery } from '../resend/resend-pages.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { DEFAULT_SUBSCRIPTIONS, type SubscriptionTopicRow, type SubscriptionTopics } from './subscription-topics.ts';
import { slugCandidate, slugOf } from '../http/derived-slug.ts';

/** How many derived slugs ("news", "news-2", …) are tried before giving up. */
const SLUG_TRIES = 20;

const Description = Type.String({ maxLength: 200 });
const ResendTopic = Type.Object(
  {
    object: Type.Literal('topic'),
    id: Type.String(),
    name: Type.String(),
    slug: Type.String({ description: 'Derived from the name; what /api/v1 broadcasts and unsubscribe links name.' }),
    description: Type.Union([Type.String(), Type.Null()]),
    default_subscription: StringEnum(DEFAULT_SUBSCRIPTIONS),
    created_at: Timestamp(),
  },
  { $id: 'ResendTopic', title: 'ResendTopic' },
);
const ResendTopicList = ResendListOf(ref(ResendTopic), 'ResendTopicList');
const ResendTopicRef = Type.Object({ object: Type.Literal('topic'), id: Type.String() }, { $id: 'ResendTopicRef', title: 'ResendTopicRef' });
const ResendTopicRemoved = Type.Object({ object: Type.Literal('topic'), id: Type.String(), deleted: Type.Literal(true) }, { $id: 'ResendTopicRemoved', title: 'ResendTopicRemoved' });
const TopicParams = Type.Object({ id: Type.String({ description: 'The topic\'s id or slug.' }) });

export const toResendTopic = (r: SubscriptionTopicRow) => ({
  object: 'topic' as const,
  id: r.id,
  name: r.name,
  slug: r.slug,
  description: r.description,
  default_subscription: r.default_subscription,
  created_at: r.created_at.toISOString(),
});

export async function resendTopicRoutes(app: App, deps: { subscriptionTopics: SubscriptionTopics; pg: Pool }): Promise<void> {
  const { subscriptionTopics, pg } = deps;
  const tags = ['resend-topics'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [ResendTopic, ResendTopicList, ResendTopicRef, ResendTopicRemoved]);

  const topicOf = (organizationId: string, idOrSlug: string) => subscriptionTopicOf(subscriptionTopics, organizationId, idOrSlug);

  app.post('/topics', {
    config,
    schema: {
      tags, operationId: 'resendCreateTopic', summary: 'Create a topic (Resend\'s topics.create)',
      description: 'Its slug is derived from the name (lower-case, a-z 0-9 and -; "-2", "-3"… when taken).',
      body: Type.Object({ name: Name(120), description: Type.Optional(Description), default_subscription: StringEnum(DEFAULT_SUBSCRIPTIONS) }, { additionalProperties: false }),
      response: { 201: withRateLimitHeaders(ResendTopicRef, 'The new topic.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    const base = slugOf(request.body.name);
    for (let n = 1; n <= SLUG_TRIES; n++) {
      const row = await subscriptionTopics.create(request.mailAuth.organizationId, { ...request.body, slug: slugCandidate(base, n) });
      if (row) return reply.status(201).send({ object: 'topic' as const, id: row.id });
    }
    throw new ApiError(409, 'topic_exists', `The organization has ${SLUG_TRIES} topics named like "${request.body.name}" already; choose another name.`);
  });

  app.get('/topics', {
    config,
    schema: { tags, operationId: 'resendListTopics', summary: 'List topics', querystring: ResendPageQuery, response: { 200: withRateLimitHeaders(ResendTopicList, 'Newest first.'), ...resendErrorResponses(...RESEND_ERRORS, 400) } },
  }, async (request) => resendPage(pg, subscriptionTopics.listQuery(request.mailAuth.organizationId), request.query, toResendTopic));

  app.get('/topics/:id', {
    config,
    schema: { tags, operationId: 'resendGetTopic', summary: 'Get a topic', params: TopicParams, response: { 200: withRateLimitHeaders(ResendTopic, 'The topic.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => toResendTopic(await topicOf(request.mailAuth.organizationId, request.params.id)));

  app.patch('/topics/:id', {
    config,
    schema: {
      tags, operationId: 'resendUpdateTopic', summary: 'Change a topic\'s name, description or default',
      description: 'The SDK sends the id in the body too: it must name the same topic. The slug does not change.',
      params: TopicParams,
      body: Type.Object({ id: Type.Optional(Type.String({ maxLength: 100 })), name: Type.Optional(Name(120)), description: Type.Optional(Description), default_subscription: Type.Optional(StringEnum(DEFAULT_SUBSCRIPTIONS)) }, { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(ResendTopicRef, 'Updated.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await topicOf(request.mailAuth.organizationId, request.params.id);
    const { id, ...change } = request.body;
    if (id !== undefined && id !== row.id && id !== row.slug) throw new ApiError(400, 'id_mismatch', 'The id in the body names another topic than the path.', [{ path: '/id', message: 'not the topic of the path' }]);
    await subscriptionTopics.update(row.organization_id, row.id, change);
    return { object: 'topic' as const, id: row.id };
  });

  app.delete('/topics/:id', {
    config,
    schema: { tags, operationId: 'resendRemoveTopic', summary: 'Remove a topic and its subscriptions', params: TopicParams, response: { 200: withRateLimitHeaders(ResendTopicRemoved, 'Removed.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const row = await topicOf(request.mailAuth.organizationId, request.params.id);
    await subscriptionTopics.delete(row.organization_id, row.id);
    return { object: 'topic' as const, id: row.id, deleted: true as const };
  });
}
