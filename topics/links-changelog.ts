import type { TopicDefinition } from '../src/platform/kafka/topic-definition.ts';

// Every change of a link, as its whole new state; compacted, so the topic is the
// current state of every link, from which each ingress warms its redirect cache.
export const linksChangelogTopic: TopicDefinition = {
  name: 'links.changelog',
  partitions: 6,
  key: 'shortId',
  cleanupPolicy: 'compact',
  valueSchema: 'link-state.avsc',
  description: 'Current state of every short link, keyed by shortId (<domainId>/<shortId> on a branded domain; compacted).',
};
