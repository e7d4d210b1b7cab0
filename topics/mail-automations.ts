// The topics of automations (issue 17):
//   mail.automation-steps   work for the automation actor, keyed by run id (one run's steps in order)
//   mail.inbound-events     what POST /events received, keyed by organization, for data teams
//   mail.automation-runs    each change of a run, keyed by organization, for data teams
import type { TopicDefinition } from '../src/platform/kafka/topic-definition.ts';

const WEEK_MS = 7 * 24 * 3600 * 1000;

export const mailAutomationStepsTopic: TopicDefinition = {
  name: 'mail.automation-steps',
  partitions: 6,
  key: 'run_id',
  cleanupPolicy: 'delete',
  retentionMs: WEEK_MS,
  valueSchema: 'mail-automation-step.avsc',
  description: 'A run whose next step is due, keyed by run id; at-least-once, idempotent by the run\'s stored step.',
};

export const mailInboundEventsTopic: TopicDefinition = {
  name: 'mail.inbound-events',
  partitions: 6,
  key: 'organization_id',
  cleanupPolicy: 'delete',
  retentionMs: WEEK_MS,
  valueSchema: 'mail-inbound-event.avsc',
  description: 'Events accepted by POST /events, keyed by organization; at-least-once, deduplicate by event_id.',
};

export const mailAutomationRunsTopic: TopicDefinition = {
  name: 'mail.automation-runs',
  partitions: 6,
  key: 'organization_id',
  cleanupPolicy: 'delete',
  retentionMs: WEEK_MS,
  valueSchema: 'mail-automation-run.avsc',
  description: 'Each change of an automation run (started, step_queued, waiting, completed, canceled), keyed by organization; at-least-once, deduplicate by change_id.',
};
