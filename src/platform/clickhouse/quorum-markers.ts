// ClickHouse 18.16 on replicas neither mutates nor merges the part that is a partition's last quorum
// insert (ZooKeeper's <table>/quorum/last_part, kept for select_sequential_consistency): a mutation
// (ALTER … DELETE/UPDATE) that covers that part waits on every replica, parts_to_do 1 and an empty
// queue, until another quorum insert lands in that partition. On a partition no longer written (an
// old month, a quiet table) that is never, so an erasure or retention run would never finish.
// 18.16 has no setting or mutation form that skips the part (probed on 18.16.1), so this makes that
// next insert itself: one marker row, quorum inserted into the stalled partition, after which the
// old part is no longer the last and the mutation finishes within seconds.
// The marker is a row every column of which is its default (workspace_id '', scan_id '', counts 0,
// empty sketches) but the partition column, the partition's first second: no tenant's query reads
// workspace_id '', it is inserted into the table itself (never scans_input, so no view counts it),
// and it has the same sorting key each time, so merges keep one per partition of a Replacing or
// Aggregating table, and none of a Summing one (a row whose sums are all 0 is dropped by a merge).
// Its insert is never deduplicated: the same row again must still make a new part.
import type { ClickHouse } from './client.ts';
import { ident, inStrings, sql } from './literal.ts';
import { insertSettings, replicasOf, zookeeperPathOf } from './replication.ts';

/** A stalled partition: its last quorum part is covered by a mutation not yet done. */
export interface StalledPartition {
  table: string;
  partition: string;
  lastPart: string;
}

/**
 * The partitions of these tables whose last quorum part a mutation not yet done (on some replica
 * that serves) covers: the mutation's block number in that partition is above the part's last block.
 */
export async function stalledPartitions(ch: ClickHouse, tables: readonly string[]): Promise<StalledPartition[]> {
  const replicated: string[] = [];
  for (const table of tables) if ((await replicasOf(ch, table)) > 1) replicated.push(table);
  if (replicated.length === 0) return [];
  // Each replica applies a mutation in its own time: what one has left to do, another may have done.
  const pending = (await ch.rowsOnEach<{ table: string; partition_id: string; number: string }>(sql`
    SELECT table, partition_id, max(block) AS number FROM system.mutations
     ARRAY JOIN block_numbers.partition_id AS partition_id, block_numbers.number AS block
     WHERE database = ${ch.database} AND table IN ${inStrings(replicated)} AND is_done = 0
     GROUP BY table, partition_id`)).flat();
  if (pending.length === 0) return [];
  const upTo = new Map<string, number>();
  for (const p of pending) {
    const key = `${p.table}\t${p.partition_id}`;
    upTo.set(key, Math.max(upTo.get(key) ?? -1, Number(p.number)));
  }
  const stalled: StalledPartition[] = [];
  for (const table of new Set(pending.map((p) => p.table))) {
    for (const { partition, part } of await lastQuorumParts(ch, table)) {
      const number = upTo.get(`${table}\t${partition}`);
      if (number !== undefined && maxBlockOf(part, partition) < number) stalled.push({ table, partition, lastPart: part });
    }
  }
  return stalled;
}

/** Each partition's last quorum part of the table, as ZooKeeper holds them. */
async function lastQuorumParts(ch: ClickHouse, table: string): Promise<{ partition: string; part: string }[]> {
  const path = await zookeeperPathOf(ch, table);
  if (path === undefined) return [];
  const [node] = await ch.rows<{ value: string }>(sql`SELECT value FROM system.zookeeper WHERE path = ${`${path}/quorum`} AND name = 'last_part'`);
  return parseLastParts(node?.value ?? '');
}

/**
 * 18.16's last_part: "version: 2\nparts count: N\n" then "<partition>\t<part>" lines (one per
 * partition); an older one held a single part's name.
 */
export function parseLastParts(value: string): { partition: string; part: string }[] {
  const lines = value.split('\n').filter((l) => l !== '');
  if (lines[0]?.startsWith('version:')) {
    return lines.slice(2).map((l) => l.split('\t')).filter((p) => p.length === 2).map(([partition, part]) => ({ partition: partition!, part: part! }));
  }
  return lines.length === 1 ? [{ partition: lines[0]!.slice(0, lines[0]!.indexOf('_')), part: lines[0]! }] : [];
}

/** A part's last block number: `<partition>_<min>_<max>_<level>[_<mutation>]`. */
export function maxBlockOf(part: string, partition: string): number {
  return Number(part.slice(partition.length + 1).split('_')[1]);
}

const MONTHLY = /PARTITION BY toYYYYMM\((\w+)\)/;

/**
 * Quorum inserts a marker row into each of these partitions of the table, by one statement (18.16
 * writes a part per partition, each with its quorum), never deduplicated: each partition's last
 * quorum part is then its marker's.
 */
export async function insertMarkers(ch: ClickHouse, table: string, partitions: readonly string[]): Promise<void> {
  if (partitions.length === 0) return;
  const [row] = await ch.rows<{ engine_full: string }>(sql`SELECT engine_full FROM system.tables WHERE database = ${ch.database} AND name = ${table}`);
  const column = MONTHLY.exec(row?.engine_full ?? '')?.[1];
  const odd = partitions.find((p) => !/^\d{6}$/.test(p));
  if (!column || odd !== undefined) throw new Error(`ClickHouse table ${table}: no marker row for partition ${odd ?? partitions[0]} (not partitioned by toYYYYMM of a column)`);
  const [{ type } = { type: '' }] = await ch.rows<{ type: string }>(sql`SELECT type FROM system.columns WHERE database = ${ch.database} AND table = ${table} AND name = ${column}`);
  // Each month's first day, as a Date or as its midnight in the server's time zone (the partition key's).
  const days = partitions.map((p) => `${p.slice(0, 4)}-${p.slice(4)}-01`);
  const first = type === 'Date' ? sql`toDate(arrayJoin(${days}))` : sql`toDateTime(toDate(arrayJoin(${days})))`;
  const settings = { ...(await insertSettings(ch, table)), insert_deduplicate: 0 as const };
  await ch.exec(sql`INSERT INTO ${ident(table)} (${ident(column)}) SELECT ${first}`, { settings });
}
