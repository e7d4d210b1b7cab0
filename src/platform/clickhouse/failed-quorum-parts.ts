// A replica that keeps a part whose quorum insert failed, beside the insert's retry: rows counted twice
// there. ClickHouse 18.16, when no active replica holds a part still waiting for its quorum (the replica
// that took the insert was killed, or its ZooKeeper session expired), lets another replica mark that
// quorum failed: it lists the part under <table>/quorum/failed_parts and deletes the block's hash, so the
// client's retry of the same block is stored anew rather than dropped as a repeat. The replica that took
// the insert still holds the part; on its next start or new session it moves every failed part it holds
// to detached/noquorum_* before it becomes active again. But the marking may land between that clean-up
// and the replica's activation (seen in clickhouse-replica-faults: replica 3 marked a part of
// `conversions` failed about 70 ms after replica 1, with a new session, had looked for failed parts; replica 1
// then kept it beside the sink's retry, two rows of each of its conversions, and a rollup counted one
// block twice the same way). Nothing in 18.16 looks again until that replica's next new session.
// The repair: a replica whose active parts include one its table lists as failed gets SYSTEM RESTART
// REPLICA for that table, which runs the same clean-up again (probed on 18.16: the part went to
// detached/noquorum_*, the replica's sum right again, the others untouched).
// Not repaired: such a part merged with others on that replica first (its name is gone; a merge needs
// that replica to lead the table's merges, since no other replica holds the part).
import type { ClickHouse } from './client.ts';
import { ident, inStrings, sql } from './literal.ts';
import { zookeeperPathOf } from './replication.ts';
import type { ServerHealth } from './server-health.ts';

export interface OrphanedQuorumPart {
  /** The replica that still holds the part. */
  server: ServerHealth;
  table: string;
  part: string;
}

/** The replicated tables of the client's database. */
async function replicatedTables(ch: ClickHouse): Promise<string[]> {
  const rows = await ch.rows<{ table: string }>(sql`SELECT table FROM system.replicas WHERE database = ${ch.database} ORDER BY table`);
  return rows.map((r) => r.table);
}

/** The parts the table lists as failed quorum inserts (none when it never had one). */
async function failedQuorumParts(ch: ClickHouse, table: string): Promise<string[]> {
  const path = await zookeeperPathOf(ch, table);
  if (path === undefined) return [];
  const rows = await ch.rows<{ name: string }>(sql`SELECT name FROM system.zookeeper WHERE path = ${`${path}/quorum`} AND name = 'failed_parts'`);
  if (rows.length === 0) return [];
  return (await ch.rows<{ name: string }>(sql`SELECT name FROM system.zookeeper WHERE path = ${`${path}/quorum/failed_parts`}`)).map((r) => r.name);
}

/** Parts of the database's replicated tables that a replica that serves holds although their quorum failed. */
export async function orphanedQuorumParts(ch: ClickHouse): Promise<OrphanedQuorumPart[]> {
  if (ch.servers.length < 2) return [];
  const orphaned: OrphanedQuorumPart[] = [];
  for (const table of await replicatedTables(ch)) {
    const failed = await failedQuorumParts(ch, table);
    if (failed.length === 0) continue;
    const answers = await ch.rowsByServer<{ name: string }>(sql`
      SELECT name FROM system.parts WHERE database = ${ch.database} AND table = ${table} AND active AND name IN ${inStrings(failed)}`);
    for (const { server, rows } of answers) for (const { name } of rows) orphaned.push({ server, table, part: name });
  }
  return orphaned;
}

/** Finds the orphaned parts and restarts each holder's table, which moves them to detached; returns what it found. */
export async function removeOrphanedQuorumParts(ch: ClickHouse): Promise<OrphanedQuorumPart[]> {
  const orphaned = await orphanedQuorumParts(ch);
  // One restart per replica and table, however many parts it holds there.
  const byTable = new Map<string, { server: ServerHealth; table: string; parts: string[] }>();
  for (const { server, table, part } of orphaned) {
    const key = `${server.url}\t${table}`;
    const held = byTable.get(key) ?? { server, table, parts: [] };
    held.parts.push(part);
    byTable.set(key, held);
  }
  for (const { server, table, parts } of byTable.values()) {
    ch.log?.warn({ server: server.url, table, parts }, 'ClickHouse replica holds parts whose quorum insert failed: restarting its table to detach them');
    await ch.execOnServer(server, sql`SYSTEM RESTART REPLICA ${ident(ch.database)}.${ident(table)}`);
  }
  return orphaned;
}
