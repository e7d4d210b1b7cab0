// A link's scans so far, as ClickHouse has them: what a scan limit added to a
// link that had none starts counting from (the scan-limit actor counts only
// the scans of links that had a limit when they were redirected). Read from the
// daily link rollup (exact, like every rollup fed by the scan sink), which is
// sorted by link, so it costs the same for a link in a workspace of millions.
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { sql } from '../../platform/clickhouse/literal.ts';

export type LifetimeScans = (workspaceId: string, linkId: string) => Promise<number>;

export function lifetimeScans(clickhouse: ClickHouse): LifetimeScans {
  return async (workspaceId, linkId) => {
    const [row] = await clickhouse.rows<{ scans: string }>(
      sql`SELECT sum(scans) AS scans FROM scans_link_dims_daily WHERE workspace_id = ${workspaceId} AND dim = 'total' AND link_id = ${linkId}`,
    );
    return Number(row?.scans ?? 0);
  };
}
