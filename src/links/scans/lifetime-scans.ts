// A link's scans over its whole life, the count a scan limit is held to. It is
// read from what the scan sink stores exactly once: the daily link rollup fed
// by every insert into `scans` (its `visit` rows, one a scan, bots included: every redirect sent
// someone to the destination). It includes a scan once the sink has stored it,
// so it trails the redirects by the scans still on their way (about a second). On replicas it is read
// with sequential consistency (replication.ts): the scan limit closer counts right after the sink's
// quorum insert, and a replica that has not fetched that insert yet would count too few and leave a
// link open past its limit; such a replica refuses the read, which goes on to another.
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { inList, sql } from '../../platform/clickhouse/literal.ts';
import { LINK_LAYOUT } from '../analytics/rollup-rows.ts';
import { readYourWritesSettings } from '../../platform/clickhouse/replication.ts';

export interface CountedLink {
  id: string;
  workspaceId: string;
}

/** Links per query: keeps a query well within ClickHouse's max_query_size (256 KiB). */
const LINKS_PER_QUERY = 1000;

export class LifetimeScans {
  private readonly clickhouse: ClickHouse;

  constructor(clickhouse: ClickHouse) {
    this.clickhouse = clickhouse;
  }

  /**
   * Each link's lifetime scans (0 when it has none), counting only scans stored under its own
   * workspace. With `timeoutMs`, the queries are cancelled (and this rejects) once it has passed.
   */
  async count(links: readonly CountedLink[], timeoutMs?: number): Promise<Map<string, number>> {
    const counts = new Map(links.map((l) => [l.id, 0]));
    const signal = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    const workspaceOf = new Map(links.map((l) => [l.id, l.workspaceId]));
    const settings = links.length === 0 ? {} : await readYourWritesSettings(this.clickhouse, 'scans_link_dims_daily', signal);
    for (let i = 0; i < links.length; i += LINKS_PER_QUERY) {
      signal?.throwIfAborted();
      const some = links.slice(i, i + LINKS_PER_QUERY);
      const rows = await this.clickhouse.rows<{ workspace_id: string; link_id: string; scans: string }>(sql`
        SELECT workspace_id, link_id, sum(scans) AS scans FROM scans_link_dims_daily
         WHERE workspace_id IN ${inList([...new Set(some.map((l) => l.workspaceId))])}
           AND dim = ${LINK_LAYOUT.oneRowAScan} AND link_id IN ${inList(some.map((l) => l.id))}
         GROUP BY workspace_id, link_id`, { signal, maxExecutionSeconds: timeoutMs === undefined ? undefined : Math.ceil(timeoutMs / 1000), settings });
      for (const row of rows) if (workspaceOf.get(row.link_id) === row.workspace_id) counts.set(row.link_id, Number(row.scans));
    }
    return counts;
  }

  async of(link: CountedLink, timeoutMs?: number): Promise<number> {
    return (await this.count([link], timeoutMs)).get(link.id) ?? 0;
  }
}

