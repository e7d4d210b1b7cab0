// What each rollup of scans counts of some workspaces' scans, against the scans table itself, read on
// one server: after every insert, each rollup counts every scan once. Used on replicas, each read
// by itself (test/support/clickhouse-replicas.ts), after SYSTEM SYNC REPLICA of ROLLUP_TABLES.

/** The scans table and every rollup of it (migrations 002-009). */
export const ROLLUP_TABLES = [
  'scans', 'scans_dims', 'scans_country_dims', 'scans_link_dims', 'scans_link_dims_daily', 'scans_link_triggers', 'scans_link_variants',
  'scans_visitors', 'scans_country_visitors', 'scans_link_visitors', 'scans_link_visitors_daily',
] as const;

/**
 * Each count with what it must equal: every scan has one `agent` row in the workspace and country
 * rollups and one `visit` row in the link rollups; the trigger and variant rollups count the scans
 * with a trigger other than link and with a variant; the visitors rollups' sketches, merged, equal
 * the same sketch of the scans' visitors.
 */
const COUNTS: readonly [name: string, expression: (db: string, ws: string) => string, of: string][] = [
  ['scans', (db, ws) => `(SELECT count() FROM ${db}.scans WHERE workspace_id IN (${ws}))`, ''],
  ['triggered', (db, ws) => `(SELECT countIf(trigger != 'link') FROM ${db}.scans WHERE workspace_id IN (${ws}))`, ''],
  ['varied', (db, ws) => `(SELECT countIf(variant != '') FROM ${db}.scans WHERE workspace_id IN (${ws}))`, ''],
  ['visitors', (db, ws) => `(SELECT uniqHLL12(visitor_id) FROM ${db}.scans WHERE workspace_id IN (${ws}))`, ''],
  ['scans_dims', (db, ws) => `(SELECT sum(scans) FROM ${db}.scans_dims WHERE workspace_id IN (${ws}) AND dim = 'agent')`, 'scans'],
  ['scans_country_dims', (db, ws) => `(SELECT sum(scans) FROM ${db}.scans_country_dims WHERE workspace_id IN (${ws}) AND dim = 'agent')`, 'scans'],
  ['scans_link_dims', (db, ws) => `(SELECT sum(scans) FROM ${db}.scans_link_dims WHERE workspace_id IN (${ws}) AND dim = 'visit')`, 'scans'],
  ['scans_link_dims_daily', (db, ws) => `(SELECT sum(scans) FROM ${db}.scans_link_dims_daily WHERE workspace_id IN (${ws}) AND dim = 'visit')`, 'scans'],
  ['scans_link_triggers', (db, ws) => `(SELECT sum(scans) FROM ${db}.scans_link_triggers WHERE workspace_id IN (${ws}))`, 'triggered'],
  ['scans_link_variants', (db, ws) => `(SELECT countMerge(scans) FROM ${db}.scans_link_variants WHERE workspace_id IN (${ws}))`, 'varied'],
  ['scans_visitors', (db, ws) => `(SELECT uniqHLL12Merge(visitors) FROM ${db}.scans_visitors WHERE workspace_id IN (${ws}))`, 'visitors'],
  ['scans_country_visitors', (db, ws) => `(SELECT uniqHLL12Merge(visitors) FROM ${db}.scans_country_visitors WHERE workspace_id IN (${ws}))`, 'visitors'],
  ['scans_link_visitors', (db, ws) => `(SELECT uniqHLL12Merge(visitors) FROM ${db}.scans_link_visitors WHERE workspace_id IN (${ws}))`, 'visitors'],
  ['scans_link_visitors_daily', (db, ws) => `(SELECT uniqHLL12Merge(visitors) FROM ${db}.scans_link_visitors_daily WHERE workspace_id IN (${ws}))`, 'visitors'],
];

/** One query for every count: its answer (TabSeparated) goes to rollupCounts. */
export function rollupCountsQuery(database: string, workspaceIds: readonly string[]): string {
  const ws = workspaceIds.map((id) => `'${id}'`).join(', ');
  return `SELECT ${COUNTS.map(([, expression]) => expression(database, ws)).join(', ')}`;
}

export interface RollupCounts {
  /** Each count by name (the scans, and what each rollup counts of them). */
  counts: Record<string, number>;
  /** The rollups whose count is not what the scans table says: `<rollup> <count> of <count>`. */
  wrong: string[];
}

export function rollupCounts(answer: string): RollupCounts {
  const values = answer.trim().split('\t').map(Number);
  const counts = Object.fromEntries(COUNTS.map(([name], i) => [name, values[i]!]));
  const wrong = COUNTS.filter(([name, , of]) => of && counts[name] !== counts[of]).map(([name, , of]) => `${name} ${counts[name]} of ${counts[of]}`);
  return { counts, wrong };
}
