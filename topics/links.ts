// The topics of the link product. The entry points hand this list to the
// platform, which creates the topics and registers their schemas at start.
import type { TopicDefinition } from '../src/platform/kafka/topic-definition.ts';
import { conversionsTopic } from './conversions.ts';
import { linksChangelogTopic } from './links-changelog.ts';
import { orphanVisitsTopic } from './orphan-visits.ts';
import { scansTopic } from './scans.ts';

export const linkTopics: readonly TopicDefinition[] = [linksChangelogTopic, scansTopic, conversionsTopic, orphanVisitsTopic];
