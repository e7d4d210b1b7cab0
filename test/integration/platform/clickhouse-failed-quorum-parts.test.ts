// A replica that keeps a part whose quorum insert failed (failed-quorum-parts.ts), made on three replicas
// of this file's own the way ClickHouse 18.16 makes it: a quorum insert on replica 1 that the others
// cannot fetch (fetches stopped) times out; its quorum is then marked failed as a replica that finds no
// active holder marks it (executeFetch: the quorum status removed, the part listed under failed_parts,
// the block's hash deleted), while replica 1 stays active, as when the marking lands between its
// clean-up and its activation; the same block inserted again is stored anew. Replica 1 then counts the
// block twice and the others once, until the repair restarts replica 1's table, which detaches the part.
// Another table written beside it is left as it was, and reads through the client answer throughout.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClickHouse, type ClickHouse } from '../../../src/platform/clickhouse/client.ts';
import { orphanedQuorumParts, removeOrphanedQuorumParts } from '../../../src/platform/clickhouse/failed-quorum-parts.ts';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import { REPLICAS, startTestReplicas, type Replica, type TestReplicas } from '../../support/clickhouse-replicas.ts';
import { eventually, testConfig } from '../../support/env.ts';

const DB = 'orphans';
const BLOCK = [{ k: 'a', n: 1 }, { k: 'b', n: 2 }];
let replicas: TestReplicas;
let ch: ClickHouse;

const zookeeperPath = (table: string) => `/clickhouse/tables/01/${DB}/${table}`;

/** What each replica sums of the table, once it has fetched what its queue holds. */
async function sums(table: string): Promise<Record<Replica, number>> {
  const answer = {} as Record<Replica, number>;
  for (const r of REPLICAS) {
    await replicas.query(r, `SYSTEM SYNC REPLICA ${DB}.${table}`);
    answer[r] = Number((await replicas.query(r, `SELECT sum(n) FROM ${DB}.${table}`)).trim());
  }
  return answer;
}

/** An insert on one replica, answered as it is (a quorum that times out answers 500). */
async function insertOn(replica: Replica, settings: string, table: string): Promise<string> {
  const res = await fetch(`${replicas.urlOf(replica)}/?${settings}`, { method: 'POST', body: `INSERT INTO ${DB}.${table} FORMAT JSONEachRow ${BLOCK.map((r) => JSON.stringify(r)).join('\n')}` });
  return `${res.status} ${await res.text()}`;
}

beforeAll(async () => {
  replicas = await startTestReplicas();
  for (const r of REPLICAS) {
    await replicas.query(r, `CREATE DATABASE ${DB}`);
    for (const table of ['counted', 'beside']) {
      await replicas.query(r, `CREATE TABLE ${DB}.${table} (k String, n UInt64) ENGINE = ReplicatedSummingMergeTree('${zookeeperPath(table)}', '{replica}') ORDER BY k`);
    }
  }
  ch = createClickHouse(testConfig(replicas.env), DB);
}, 120_000);

afterAll(async () => {
  await ch?.close();
  await replicas?.release();
}, 60_000);

it("detaches a part whose quorum failed from the replica that kept it beside its retry's part, and leaves the rest", async () => {
  await ch.insert('beside', BLOCK, { settings: { insert_quorum: '2' } });
  expect(await orphanedQuorumParts(ch)).toEqual([]);

  // The insert on replica 1, which no other replica can fetch: its quorum times out, its part stays.
  for (const r of [2, 3] as const) await replicas.query(r, `SYSTEM STOP FETCHES ${DB}.counted`);
  expect(await insertOn(1, 'insert_quorum=2&insert_quorum_timeout=1000', 'counted')).toMatch(/^500 .*Timeout while waiting for quorum/s);
  const [part] = (await replicas.query(1, `SELECT name FROM system.parts WHERE database = '${DB}' AND table = 'counted' AND active`)).trim().split('\n');
  const [block] = (await replicas.query(1, `SELECT name FROM system.zookeeper WHERE path = '${zookeeperPath('counted')}/blocks'`)).trim().split('\n');
  expect(part).toMatch(/^all_\d+_\d+_0$/);

  // Its quorum marked failed as 18.16's executeFetch does, replica 1 active throughout.
  await replicas.zookeeperCommand(2, 'delete', `${zookeeperPath('counted')}/quorum/status`);
  await replicas.zookeeperCommand(2, 'create', `${zookeeperPath('counted')}/quorum/failed_parts/${part}`);
  await replicas.zookeeperCommand(2, 'delete', `${zookeeperPath('counted')}/blocks/${block}`);
  for (const r of [2, 3] as const) await replicas.query(r, `SYSTEM START FETCHES ${DB}.counted`);

  // The client's retry of the same block: no longer known as a repeat, so stored anew.
  await ch.insert('counted', BLOCK, { settings: { insert_quorum: '2' } });
  expect(await sums('counted')).toEqual({ 1: 6, 2: 3, 3: 3 });
  const found = await orphanedQuorumParts(ch);
  expect(found.map((o) => ({ server: o.server.url, table: o.table, part: o.part }))).toEqual([{ server: replicas.urlOf(1), table: 'counted', part }]);

  // Reads through the client go on while replica 1's table restarts (a read it cannot answer moves on).
  let repairing = true;
  const reads: string[] = [];
  const reading = (async () => {
    while (repairing) {
      reads.push(await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM counted`).then(() => 'answered', (err: unknown) => String(err)));
    }
  })();
  expect((await removeOrphanedQuorumParts(ch)).map((o) => o.part)).toEqual([part]);
  repairing = false;
  await reading;
  expect(reads.filter((r) => r !== 'answered')).toEqual([]);
  // The restarted table serves again once its replica is active.
  await eventually(async () => (await replicas.query(1, `SELECT is_readonly FROM system.replicas WHERE database = '${DB}' AND table = 'counted'`)).trim() === '0' || undefined, 30_000, 100);
  expect(await sums('counted')).toEqual({ 1: 3, 2: 3, 3: 3 });
  expect(await sums('beside')).toEqual({ 1: 3, 2: 3, 3: 3 });
  expect(await orphanedQuorumParts(ch)).toEqual([]);
}, 120_000);
