// The orphan visit sink: visits from the `orphan-visits` topic into ClickHouse
// (orphan_visits), each visit id once (see idempotent-sink.ts).
import type { BatchWorkerKind } from '../../platform/actors/worker-kind.ts';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { idempotentSinkKind } from '../../platform/clickhouse/idempotent-sink.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { orphanVisitsTopic } from '../../../topics/orphan-visits.ts';
import type { OrphanVisitEvent } from './orphan-visit.ts';

/** A visit as a ClickHouse row (absent values as empty strings; ids in lower case, as the API gives them). */
export function toOrphanVisitRow(e: OrphanVisitEvent): Record<string, unknown> {
  return {
    visit_id: e.visitId.toLowerCase(),
    workspace_id: e.workspaceId.toLowerCase(),
    domain_id: e.domainId.toLowerCase(),
    domain: e.domain,
    path: e.path,
    type: e.type,
    ts: Math.floor(e.timestamp / 1000),
    country: e.country ?? '',
    device: e.device,
    is_bot: e.isBot ? 1 : 0,
    referrer_host: e.referrerHost ?? '',
  };
}

export function orphanVisitSinkKind(clickhouse: ClickHouse, pg: Pool): BatchWorkerKind<OrphanVisitEvent> {
  return idempotentSinkKind<OrphanVisitEvent>(clickhouse, pg, {
    kind: 'orphan-visit-sink',
    topic: orphanVisitsTopic,
    table: 'orphan_visits',
    tenantColumn: 'workspace_id',
    tenantOf: (e) => e.workspaceId.toLowerCase(),
    idColumn: 'visit_id',
    idOf: (e) => e.visitId.toLowerCase(),
    toRow: toOrphanVisitRow,
  });
}
