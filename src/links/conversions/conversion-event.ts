// The value of a `conversions` message (schemas/conversion.avsc) and its
// ClickHouse columns.
import type { Column } from '../../platform/clickhouse/row-binary.ts';
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

/** A conversion's ClickHouse columns (absent values as empty strings or 0; DateTime as epoch seconds; metadata as JSON text). */
export const CONVERSION_COLUMNS: readonly Column<ConversionEvent>[] = [
  { name: 'conversion_id', type: 'String', of: (e) => e.conversionId },
  { name: 'type', type: 'String', of: (e) => e.type },
  { name: 'event', type: 'String', of: (e) => e.event },
  { name: 'workspace_id', type: 'String', of: (e) => e.workspaceId },
  { name: 'link_id', type: 'String', of: (e) => e.linkId },
  { name: 'scan_id', type: 'String', of: (e) => e.scanId },
  { name: 'click_id', type: 'String', of: (e) => e.clickId },
  { name: 'campaign_id', type: 'String', of: (e) => e.campaignId ?? '' },
  { name: 'ts', type: 'DateTime', of: (e) => Math.floor(e.timestamp / 1000) },
  { name: 'amount_micros', type: 'Int64', of: (e) => e.amountMicros ?? 0 },
  { name: 'currency', type: 'String', of: (e) => e.currency ?? '' },
  { name: 'external_id', type: 'String', of: (e) => e.externalId ?? '' },
  { name: 'metadata', type: 'String', of: (e) => JSON.stringify(e.metadata) },
];
