// The links-link-events worker kind (consumer group link-events): follows links.changelog and, for each link
// state it reads, queues the link events recorded up to that version
// (link-events.ts). The webhooks worker's dispatcher sends them, signed like
// scan.created. Offsets are committed after the deliveries are queued.
import type { ActorMessage, BatchWorkerKind } from '../../platform/actors/worker-kind.ts';
import { linksChangelogTopic } from '../../../topics/links-changelog.ts';
import type { LinkState } from '../changelog/link-state.ts';
import type { LinkEventQueue } from './link-events.ts';

export function linkWebhookKind(events: LinkEventQueue): BatchWorkerKind<LinkState> {
  return {
    kind: 'link-events',
    topics: [linksChangelogTopic],
    concurrency: 2,
    handleBatch: async (messages: ActorMessage<LinkState>[]) => {
      await events.takeDue(messages.map(({ value }) => ({ linkId: value.id, version: Number(value.version) })));
    },
  };
}
