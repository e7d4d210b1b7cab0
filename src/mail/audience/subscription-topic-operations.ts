// What both faces of topics share (/api/v1/topics and Resend's /topics at the root):
// a topic of the organization found by id or slug, or the one 404 for it.
import { notFound } from '../../platform/http/errors.ts';
import type { SubscriptionTopicRow, SubscriptionTopics } from './subscription-topics.ts';

/** The organization's topic by id or slug; 404 not_found otherwise. */
export async function subscriptionTopicOf(subscriptionTopics: SubscriptionTopics, organizationId: string, idOrSlug: string): Promise<SubscriptionTopicRow> {
  const row = await subscriptionTopics.find(organizationId, idOrSlug);
  if (!row) throw notFound('topic');
  return row;
}
