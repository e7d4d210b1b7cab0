// The body of a `conversion.created` webhook request: a conversion or tracked
// click recorded by POST /api/v1/track, with `conversionId` at the top as the
// receiver's idempotency key (the delivery log's eventId).
import type { ConversionEvent } from '../conversions/conversion-event.ts';

export function conversionCreatedBody(c: ConversionEvent): string {
  return JSON.stringify({
    type: 'conversion.created',
    conversionId: c.conversionId,
    createdAt: new Date(c.timestamp).toISOString(),
    data: {
      conversionId: c.conversionId,
      // click: the visitor landed on the destination; conversion: a goal was reached.
      type: c.type,
      event: c.event,
      workspaceId: c.workspaceId,
      linkId: c.linkId,
      scanId: c.scanId,
      clickId: c.clickId,
      campaignId: c.campaignId ?? null,
      timestamp: new Date(c.timestamp).toISOString(),
      amount: c.amountMicros === null ? null : c.amountMicros / 1_000_000,
      currency: c.currency ?? null,
      externalId: c.externalId ?? null,
      metadata: c.metadata,
    },
  });
}
