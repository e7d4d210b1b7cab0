// The orphan visit sink: visits from the `orphan-visits` topic into ClickHouse
// (orphan_visits), each visit id once (see idempotent-sink.ts).
import type { BatchWorkerKind } from '../../platform/actors/worker-kind.ts';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { idempotentSinkKind } from '../../platform/clickhouse/idempotent-sink.ts';
import type { Column } from '../../platform/clickhouse/row-binary.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { orphanVisitsTopic } from '../../../topics/orphan-visits.ts';
import type { OrphanVisitEvent } from './orphan-visit.ts';

/** A visit's ClickHouse columns (absent values as empty strings; ids in lower case, as the API gives them). */
export const ORPHAN_VISIT_COLUMNS: readonly Column<OrphanVisitEvent>[] = [
  { name: 'visit_id', type: 'String', of: (e) => e.visitId.toLowerCase() },
  { name: 'workspace_id', type: 'String', of: (e) => e.workspaceId.toLowerCase() },
  { name: 'domain_id', type: 'String', of: (e) => e.domainId.toLowerCase() },
  { name: 'domain', type: 'String', of: (e) => e.domain },
  { name: 'path', type: 'String', of: (e) => e.path },
  { name: 'type', type: 'String', of: (e) => e.type },
  { name: 'ts', type: 'DateTime', of: (e) => Math.floor(e.timestamp / 1000) },
  { name: 'country', type: 'String', of: (e) => e.country ?? '' },
  { name: 'device', type: 'String', of: (e) => e.device },
  { name: 'is_bot', type: 'UInt8', of: (e) => (e.isBot ? 1 : 0) },
  { name: 'referrer_host', type: 'String', of: (e) => e.referrerHost ?? '' },
];

export function orphanVisitSinkKind(clickhouse: ClickHouse, pg: Pool): BatchWorkerKind<OrphanVisitEvent> {
  return idempotentSinkKind<OrphanVisitEvent>(clickhouse, pg, {
    kind: 'orphan-visit-sink',
    topic: orphanVisitsTopic,
    table: 'orphan_visits',
    tenantColumn: 'workspace_id',
    tenantOf: (e) => e.workspaceId.toLowerCase(),
    idColumn: 'visit_id',
    idOf: (e) => e.visitId.toLowerCase(),
    columns: ORPHAN_VISIT_COLUMNS,
  });
}
