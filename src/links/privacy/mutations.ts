// ClickHouse 18.16 mutations (ALTER TABLE … DELETE / UPDATE): asynchronous
// rewrites of every part that holds matching rows (18.16 reads every part to
// find them: no partition pruning). Heavy, so the privacy runner
// batches everything it has into one per table, and waits for them on the
// condition (system.mutations), bounded.
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { ident, inStrings, sql, type SqlFragment } from '../../platform/clickhouse/literal.ts';

/** Submits `ALTER TABLE <table> <command>`; ClickHouse answers at once, the rewrite runs after. */
export async function mutate(ch: ClickHouse, table: string, command: SqlFragment): Promise<void> {
  await ch.exec(sql`ALTER TABLE ${ident(table)} ${command}`);
}

/**
 * Waits until no mutation of these tables is left to do (in this database), at most `timeoutMs`. On
 * replicas, on each that serves: each applies a replicated mutation to its own parts, in its own
 * time, and until it has, reads there (analytics, exports) still find the rows it deletes.
 */
export async function mutationsDone(ch: ClickHouse, database: string, tables: readonly string[], timeoutMs: number, intervalMs = 100): Promise<void> {
  if (tables.length === 0) return;
  const end = Date.now() + timeoutMs;
  for (;;) {
    const left = await ch.rowsOnEach<{ n: string }>(sql`SELECT count() AS n FROM system.mutations WHERE database = ${database} AND table IN ${inStrings([...tables])} AND is_done = 0`);
    if (left.every(([row]) => Number(row?.n ?? 0) === 0)) return;
    if (Date.now() > end) throw Object.assign(new Error(`ClickHouse mutations of ${tables.join(', ')} not done within ${timeoutMs} ms`), { retriable: true });
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
