// A link's scans over its whole life, the count a scan limit is held to. It is
// read from what the scan sink stores exactly once: the daily link rollup fed
// by every insert into `scans` (dim 'total', bots included: every redirect sent
// someone to the destination). It includes a scan once the sink has stored it,
// so it trails the redirects by the scans still on their way (about a second).
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { inList, sql } from '../../platform/clickhouse/literal.ts';

export interface CountedLink {
  id: string;
  workspaceId: string;
}

export class LifetimeScans {
  constructor(private readonly clickhouse: ClickHouse) {}

  /** Each link's lifetime scans (0 when it has none), counting only scans stored under its own workspace. */
  async count(links: readonly CountedLink[]): Promise<Map<string, number>> {
    const counts = new Map(links.map((l) => [l.id, 0]));
    if (links.length === 0) return counts;
    const rows = await this.clickhouse.rows<{ workspace_id: string; link_id: string; scans: string }>(sql`
      SELECT workspace_id, link_id, sum(scans) AS scans FROM scans_link_dims_daily
       WHERE workspace_id IN ${inList([...new Set(links.map((l) => l.workspaceId))])}
         AND dim = 'total' AND link_id IN ${inList(links.map((l) => l.id))}
       GROUP BY workspace_id, link_id`);
    const workspaceOf = new Map(links.map((l) => [l.id, l.workspaceId]));
    for (const row of rows) if (workspaceOf.get(row.link_id) === row.workspace_id) counts.set(row.link_id, Number(row.scans));
    return counts;
  }

  async of(link: CountedLink): Promise<number> {
    return (await this.count([link])).get(link.id) ?? 0;
  }
}
