// The rollups fed by the scans table, found in ClickHouse itself: every
// materialized view that selects FROM scans, with its target table and its
// SELECT. Erasing scans from an aggregate cannot subtract them (HyperLogLog
// sketches and countState have no inverse), so the affected keys are
// recomputed: their rows deleted (a mutation), then the view's own SELECT run
// again over those keys' remaining scans. Reading the views' definitions keeps
// this exact for every rollup, those added later included.
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { ident, join, sql, SqlFragment } from '../../platform/clickhouse/literal.ts';

export interface ScanRollup {
  /** The target table. */
  table: string;
  /** Its time bucket column. */
  time: 'hour' | 'day';
  /** Its columns, in order (the re-insert selects them by name). */
  columns: string[];
  /** The view's SELECT, with `{source}` where it reads the scans table. */
  select: string;
}

export async function scanRollups(ch: ClickHouse): Promise<ScanRollup[]> {
  const views = await ch.rows<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${ch.database} AND engine = 'MaterializedView' ORDER BY name`);
  const rollups: ScanRollup[] = [];
  for (const { name } of views) {
    const [shown] = await ch.rows<{ statement: string }>(sql`SHOW CREATE TABLE ${ident(name)}`);
    const statement = shown?.statement ?? '';
    const target = /\bTO\s+`?\w+`?\.`?(\w+)`?/.exec(statement)?.[1];
    const selectAt = statement.indexOf(' AS SELECT ');
    const source = new RegExp(`FROM\\s+\`?${ch.database}\`?\\.\`?scans\`?(?=\\s|$)`);
    if (!target || selectAt === -1 || !source.test(statement)) continue;
    const columns = (await ch.rows<{ name: string }>(sql`SELECT name FROM system.columns WHERE database = ${ch.database} AND table = ${target}`)).map((c) => c.name);
    const time = columns.includes('hour') ? 'hour' : columns.includes('day') ? 'day' : undefined;
    if (!time) throw new Error(`rollup ${target} has neither an hour nor a day column: erasure cannot recompute it`);
    rollups.push({ table: target, time, columns, select: statement.slice(selectAt + 4).replace(source, 'FROM {source}') });
  }
  return rollups;
}

/** A workspace's hourly buckets whose rollup rows are recomputed. */
export interface AffectedHours {
  workspaceId: string;
  hours: Date[];
}

const DAY = 86_400_000;
const daysOf = (hours: readonly Date[]) => [...new Set(hours.map((h) => Math.floor(h.getTime() / DAY) * DAY))].map((t) => new Date(t));

/** The rollup rows of these buckets (a rollup by day: their whole days). */
export function bucketsWhere(rollup: Pick<ScanRollup, 'time'>, affected: readonly AffectedHours[]): SqlFragment {
  return join(affected.map((a) => {
    const buckets = rollup.time === 'hour' ? a.hours : daysOf(a.hours);
    return sql`(workspace_id = ${a.workspaceId} AND ${ident(rollup.time)} IN (${join(buckets.map((b) => sql`${b}`), ', ')}))`;
  }), ' OR ');
}

/** The scans of these buckets, as the rollup counts them. */
function scansWhere(rollup: Pick<ScanRollup, 'time'>, affected: AffectedHours): SqlFragment {
  const buckets = rollup.time === 'hour' ? affected.hours : daysOf(affected.hours);
  const bucket = rollup.time === 'hour' ? sql`toStartOfHour(ts)` : sql`toStartOfDay(ts, 'UTC')`;
  return sql`workspace_id = ${affected.workspaceId} AND ${bucket} IN (${join(buckets.map((b) => sql`${b}`), ', ')})`;
}

/** Inserts the rollup's rows of these buckets again, from the scans the table holds now (one insert per workspace). */
export async function refill(ch: ClickHouse, rollup: ScanRollup, affected: readonly AffectedHours[]): Promise<void> {
  for (const a of affected) {
    const source = sql`(SELECT * FROM scans WHERE ${scansWhere(rollup, a)})`;
    const select = new SqlFragment(rollup.select.replace('{source}', () => source.text));
    await ch.exec(sql`INSERT INTO ${ident(rollup.table)} SELECT ${join(rollup.columns.map((c) => ident(c)), ', ')} FROM (${select})`);
  }
}
