// The conversion sink: conversions from the `conversions` topic into
// ClickHouse, each conversion id once (see idempotent-sink.ts).
import type { BatchWorkerKind } from '../../platform/actors/worker-kind.ts';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { idempotentSinkKind } from '../../platform/clickhouse/idempotent-sink.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { conversionsTopic } from '../../../topics/conversions.ts';
import { CONVERSION_COLUMNS, type ConversionEvent } from './conversion-event.ts';

export function conversionSinkKind(clickhouse: ClickHouse, pg: Pool): BatchWorkerKind<ConversionEvent> {
  return idempotentSinkKind<ConversionEvent>(clickhouse, pg, {
    kind: 'conversion-sink',
    topic: conversionsTopic,
    table: 'conversions',
    tenantColumn: 'workspace_id',
    tenantOf: (e) => e.workspaceId,
    idColumn: 'conversion_id',
    idOf: (e) => e.conversionId,
    columns: CONVERSION_COLUMNS,
  });
}
