// The rollups of scans, found in ClickHouse itself: every materialized view
// that selects FROM scans_input (the Null table scans enter by, migration 009)
// into a table other than scans, with its target table and its SELECT.
// Erasing scans from an aggregate cannot subtract them (HyperLogLog sketches
// and countState have no inverse), so the affected keys are
// recomputed: their rows deleted (a mutation), then the view's own SELECT run
// again over those keys' remaining scans. Reading the views' definitions keeps
// this exact for every rollup, those added later included.
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { ident, join, sql, SqlFragment } from '../../platform/clickhouse/literal.ts';
import { insertSettings, readYourWritesSettings } from '../../platform/clickhouse/replication.ts';
import { mutate, mutationsDone } from './mutations.ts';

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
    const source = new RegExp(`FROM\\s+\`?${ch.database}\`?\\.\`?scans_input\`?(?=\\s|$)`);
    // (The view that stores scans themselves is none.)
    if (!target || target === 'scans' || selectAt === -1 || !source.test(statement)) continue;
    const columns = (await ch.rows<{ name: string }>(sql`SELECT name FROM system.columns WHERE database = ${ch.database} AND table = ${target}`)).map((c) => c.name);
    const time = columns.includes('hour') ? 'hour' : columns.includes('day') ? 'day' : undefined;
    if (!time) throw new Error(`rollup ${target} has neither an hour nor a day column: erasure cannot recompute it`);
    rollups.push({ table: target, time, columns, select: statement.slice(selectAt + 4).replace(source, 'FROM {source}') });
  }
  return rollups;
}

/** [from, to): whole UTC hours (or days) whose rollup rows are recomputed. */
export interface BucketRange {
  from: Date;
  to: Date;
}

/**
 * A workspace's hours whose rollup rows are recomputed, as ranges: a busy link has scans in every
 * hour of years (26,000 hours in three), which as a list of hours made a query past ClickHouse's
 * max_ast_elements; as ranges the query's size no longer grows with the hours (hourRanges).
 */
export interface AffectedHours {
  workspaceId: string;
  ranges: BucketRange[];
}

const HOUR = 3_600_000;
const DAY = 86_400_000;

/**
 * Sorted distinct hours as runs of consecutive hours, at most `max` of them: the smallest gaps
 * between runs are closed until so. A closed gap's hours are recomputed too, which changes
 * nothing in them (their rows are rebuilt from the same scans) and bounds the query.
 */
export function hourRanges(hours: readonly number[], max: number): BucketRange[] {
  const sorted = [...new Set(hours)].sort((a, b) => a - b);
  if (sorted.length === 0) return [];
  const runs: [number, number][] = [];
  for (const h of sorted) {
    const last = runs.at(-1);
    if (last && last[1] === h) last[1] = h + HOUR;
    else runs.push([h, h + HOUR]);
  }
  if (runs.length > max) {
    // The (runs - max) smallest gaps are closed: every gap up to the threshold, and ties in order.
    const gaps = runs.slice(1).map((r, i) => r[0] - runs[i]![1]).sort((a, b) => a - b);
    const threshold = gaps[runs.length - max - 1]!;
    let ties = runs.length - max - gaps.filter((g) => g < threshold).length;
    const merged: [number, number][] = [runs[0]!];
    for (const run of runs.slice(1)) {
      const last = merged.at(-1)!;
      const gap = run[0] - last[1];
      if (gap < threshold || (gap === threshold && ties-- > 0)) last[1] = run[1];
      else merged.push(run);
    }
    return merged.map(([from, to]) => ({ from: new Date(from), to: new Date(to) }));
  }
  return runs.map(([from, to]) => ({ from: new Date(from), to: new Date(to) }));
}

/** The rollup's buckets of these hour ranges: whole days for a rollup by day (overlaps merged, so no day is refilled twice). */
function bucketRanges(rollup: Pick<ScanRollup, 'time'>, ranges: readonly BucketRange[]): BucketRange[] {
  if (rollup.time === 'hour') return [...ranges];
  const days: BucketRange[] = [];
  for (const r of ranges) {
    const from = Math.floor(r.from.getTime() / DAY) * DAY;
    const to = Math.ceil(r.to.getTime() / DAY) * DAY;
    const last = days.at(-1);
    if (last && from <= last.to.getTime()) last.to = new Date(Math.max(to, last.to.getTime()));
    else days.push({ from: new Date(from), to: new Date(to) });
  }
  return days;
}

const within = (column: SqlFragment, ranges: readonly BucketRange[]) => sql`(${join(ranges.map((r) => sql`(${column} >= ${r.from} AND ${column} < ${r.to})`), ' OR ')})`;

/** The rollup rows of these buckets (a rollup by day: their whole days). */
export function bucketsWhere(rollup: Pick<ScanRollup, 'time'>, affected: readonly AffectedHours[]): SqlFragment {
  return join(affected.map((a) => sql`(workspace_id = ${a.workspaceId} AND ${within(ident(rollup.time), bucketRanges(rollup, a.ranges))})`), ' OR ');
}

/** The scans of these buckets, as the rollup counts them. */
function scansWhere(rollup: Pick<ScanRollup, 'time'>, affected: AffectedHours): SqlFragment {
  return sql`workspace_id = ${affected.workspaceId} AND ${within(sql`ts`, bucketRanges(rollup, affected.ranges))}`;
}

/**
 * Inserts the rollup's rows of these buckets again, from the scans the table holds now (one insert per
 * workspace). `erased`: the scans just deleted, left out by the query itself, since on replicas the one
 * that answers it may not have applied the deletion yet (mutations run on each replica in its time).
 * On replicas the insert waits for a quorum, and is never deduplicated: a run again after a failure
 * deletes these rows and inserts the same block, which ClickHouse would otherwise drop as a repeat.
 */
export async function refill(ch: ClickHouse, rollup: ScanRollup, affected: readonly AffectedHours[], erased?: SqlFragment): Promise<void> {
  const quorum = await insertSettings(ch, rollup.table);
  const settings = { ...quorum, ...(await readYourWritesSettings(ch, 'scans')), ...('insert_quorum' in quorum ? { insert_deduplicate: 0 as const } : {}) };
  for (const a of affected) {
    const source = sql`(SELECT * FROM scans WHERE ${scansWhere(rollup, a)}${erased ? sql` AND NOT (${erased})` : sql``})`;
    const select = new SqlFragment(rollup.select.replace('{source}', () => source.text));
    await ch.exec(sql`INSERT INTO ${ident(rollup.table)} SELECT ${join(rollup.columns.map((c) => ident(c)), ', ')} FROM (${select})`, { settings });
  }
}

/**
 * Deletes and rebuilds every rollup's rows of these buckets from the scans the table holds (less
 * `erased`). The caller holds off every insert of these workspaces' scans meanwhile (the sink's
 * partition locks), so no scan is counted twice or missed. The rebuilt rows are new parts, which a
 * still pending deletion does not touch (a mutation covers the parts written before it); waiting for
 * the deletions keeps the buckets from being counted twice meanwhile.
 */
export async function rebuildRollups(ch: ClickHouse, affected: readonly AffectedHours[], mutationTimeoutMs: number, erased?: SqlFragment): Promise<void> {
  if (affected.length === 0) return;
  const rollups = await scanRollups(ch);
  for (const rollup of rollups) await mutate(ch, rollup.table, sql`DELETE WHERE ${bucketsWhere(rollup, affected)}`);
  await mutationsDone(ch, ch.database, rollups.map((r) => r.table), mutationTimeoutMs);
  for (const rollup of rollups) await refill(ch, rollup, affected, erased);
}
