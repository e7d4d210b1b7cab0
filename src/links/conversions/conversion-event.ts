// The value of a `conversions` message (schemas/conversion.avsc) and its
// ClickHouse row.
import type { TrackKind } from './conversion-schemas.ts';

export interface ConversionEvent {
  conversionId: string;
  type: TrackKind;
  event: string;
  workspaceId: string;
  linkId: string;
  scanId: string;
  clickId: string;
  campaignId: string | null;
  timestamp: number;
  amountMicros: number | null;
  currency: string | null;
  externalId: string | null;
  metadata: Record<string, string>;
}

export function toConversionRow(e: ConversionEvent): Record<string, unknown> {
  return {
    conversion_id: e.conversionId,
    type: e.type,
    event: e.event,
    workspace_id: e.workspaceId,
    link_id: e.linkId,
    scan_id: e.scanId,
    click_id: e.clickId,
    campaign_id: e.campaignId ?? '',
    ts: Math.floor(e.timestamp / 1000),
    amount_micros: e.amountMicros ?? 0,
    currency: e.currency ?? '',
    external_id: e.externalId ?? '',
    metadata: JSON.stringify(e.metadata),
  };
}
