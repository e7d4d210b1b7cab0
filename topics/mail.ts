// The topics of the mail product. The entry points hand this list to the
// platform, which creates the topics and registers their schemas at start.
import type { TopicDefinition } from '../src/platform/kafka/topic-definition.ts';
import { mailAutomationRunsTopic, mailAutomationStepsTopic, mailInboundEventsTopic } from './mail-automations.ts';
import { mailCommandsTopic } from './mail-commands.ts';
import { mailEventsTopic } from './mail-events.ts';
import { mailMessagesTopic } from './mail-messages.ts';

export const mailTopics: readonly TopicDefinition[] = [
  mailMessagesTopic, mailEventsTopic, mailCommandsTopic, mailAutomationStepsTopic, mailInboundEventsTopic, mailAutomationRunsTopic,
];
