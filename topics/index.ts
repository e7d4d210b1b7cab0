// Every topic of the platform. Add a topic here and it is created at start.
import { conversionsTopic } from './conversions.ts';
import { deadLettersTopic } from './dead-letters.ts';
import { linksChangelogTopic } from './links-changelog.ts';
import { scansTopic } from './scans.ts';
import type { TopicDefinition } from './topic.ts';

export const allTopics: readonly TopicDefinition[] = [deadLettersTopic, linksChangelogTopic, scansTopic, conversionsTopic];
export type { TopicDefinition } from './topic.ts';
export { prefixed } from './topic.ts';
