// The links-conversion-events worker kind (consumer group conversion-events): reads
// the `conversions` topic (keyed by workspace, so a workspace's conversions arrive
// in order on one partition) and durably queues one `conversion.created` delivery
// per conversion and endpoint that wants it, before any attempt; offsets are
// committed only after that. The webhooks worker's dispatcher sends them, signed
// and retried like scan.created, from the same delivery queue.
import type { ActorMessage, BatchWorkerKind } from '../../platform/actors/worker-kind.ts';
import { conversionsTopic } from '../../../topics/conversions.ts';
import type { ConversionEvent } from '../conversions/conversion-event.ts';
import { conversionCreatedBody } from './conversion-payload.ts';
import type { DeliveryQueue } from './delivery-queue.ts';

export function conversionWebhookKind(queue: DeliveryQueue): BatchWorkerKind<ConversionEvent> {
  return {
    kind: 'conversion-events',
    topics: [conversionsTopic],
    concurrency: 2,
    // Conversions of workspaces without endpoints are not even decoded.
    select: async (messages) => {
      const keys = messages.map((m) => m.key.toLowerCase());
      const wanted = await queue.workspacesWithEndpoints(keys);
      return keys.map((key) => wanted.has(key));
    },
    handleBatch: async (messages: ActorMessage<ConversionEvent>[]) => {
      await queue.enqueue(
        messages.map(({ value }) => ({ workspaceId: value.workspaceId, scanId: value.conversionId, timestamp: value.timestamp, body: conversionCreatedBody(value) })),
        'conversion.created',
      );
    },
  };
}
