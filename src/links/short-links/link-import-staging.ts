// Where a CSV import keeps its rows until the body has ended (link_imports, link_import_rows,
// migration 054), on a pool of its own: each step is one short statement or transaction, none
// waits on the client, and imports never take the connections the rest of the ingress needs.
import type pg from 'pg';
import { withTransaction } from '../../platform/postgres/pool.ts';
import { domainOfLink } from './link-domain.ts';
import type { LinkRow, LinkStore, PreparedLink, LinkResult } from './link-store.ts';

/** Rows moved into links per statement (LinkStore.insertPrepared), as POST /links/bulk writes them. */
const MOVE_BATCH = 1000;

export interface StagedRow {
  line: number;
  link: PreparedLink;
}

export class LinkImportStaging {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /**
   * Starts an import for the workspace: its id, or undefined while another is running. An import
   * past `expires_at` (its process stopped mid-import) is over: its rows go (any workspace's: the
   * table holds a row a running import), and this one starts.
   */
  async begin(workspaceId: string, ttlMs: number): Promise<string | undefined> {
    await this.pool.query('DELETE FROM link_imports WHERE expires_at < now()');
    const { rows } = await this.pool.query<{ id: string }>(
      `INSERT INTO link_imports (workspace_id, expires_at) VALUES ($1, now() + $2 * interval '1 millisecond')
       ON CONFLICT (workspace_id) DO NOTHING RETURNING id`,
      [workspaceId, ttlMs],
    );
    return rows[0]?.id;
  }

  /** Keeps rows checked so far, in one statement. */
  async stage(importId: string, rows: readonly StagedRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.pool.query('INSERT INTO link_import_rows (import_id, line, link) SELECT $1, unnest($2::int[]), unnest($3::jsonb[])', [
      importId,
      rows.map((r) => r.line),
      rows.map((r) => JSON.stringify(r.link)),
    ]);
  }

  /**
   * Moves the staged rows into links on the workspace's default domain, in line order, in one
   * transaction that ends the import: all of them or none. Calls `each` with every row's result.
   */
  async move(store: LinkStore, workspaceId: string, importId: string, each: (line: number, result: LinkResult<{ row: LinkRow }>) => void): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      // Imported links go where POST /links puts a link that names no domain: the workspace's default
      // (its row locked until the links are written, as for one link).
      const domain = await domainOfLink(client, workspaceId, undefined, store.baseHost);
      let after = 0;
      for (;;) {
        const { rows } = await client.query<{ line: number; link: PreparedLink }>(
          'SELECT line, link FROM link_import_rows WHERE import_id = $1 AND line > $2 ORDER BY line LIMIT $3',
          [importId, after, MOVE_BATCH],
        );
        if (rows.length === 0) break;
        const results = await store.insertPrepared(client, workspaceId, domain ?? null, rows.map((r) => r.link));
        results.forEach((result, i) => each(rows[i]!.line, result));
        after = rows.at(-1)!.line;
      }
      await client.query('DELETE FROM link_imports WHERE id = $1', [importId]);
    });
  }

  /** Ends an import that was refused or failed: its staged rows go with it. */
  async drop(importId: string): Promise<void> {
    await this.pool.query('DELETE FROM link_imports WHERE id = $1', [importId]);
  }
}
