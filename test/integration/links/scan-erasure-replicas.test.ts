// An erasure of scans in an old month on three ClickHouse replicas of this file's own
// (test/support/clickhouse-replicas.ts). 18.16 neither mutates nor merges a partition's last quorum
// insert, so the erasure's DELETE of a month no longer receiving scans waited on every replica until
// the next quorum insert there: never. The runner now frees it with a marker row (quorum-markers.ts):
// the erasure is done, and on every replica the erased scans are gone from scans and every rollup,
// the other link's scans counted once, and the marker in no tenant's rows.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ScanPrivacy } from '../../../src/links/privacy/scan-privacy.ts';
import { Workspaces } from '../../../src/links/workspaces/workspaces.ts';
import type { ClickHouse } from '../../../src/platform/clickhouse/client.ts';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import { parseLastParts } from '../../../src/platform/clickhouse/quorum-markers.ts';
import { insertSettings } from '../../../src/platform/clickhouse/replication.ts';
import { createLogger } from '../../../src/platform/logger.ts';
import type { Pool } from '../../../src/platform/postgres/pool.ts';
import { REPLICAS, type TestReplicas } from '../../support/clickhouse-replicas.ts';
import { startReplicatedStores, type ReplicatedStores } from '../../support/replicated-stores.ts';
import { ROLLUP_TABLES, rollupCounts, rollupCountsQuery } from '../../support/links/rollup-counts.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

// The runner takes every pending erasure of its Postgres database: this file's own.
useOwnDatabases();

const DATABASE = 'erasure_replicas';
const SILENT = createLogger({ LOG_LEVEL: 'silent' });
let stores: ReplicatedStores | undefined;
let replicas: TestReplicas;
let ch: ClickHouse;
let pg: Pool;

beforeAll(async () => {
  stores = await startReplicatedStores(DATABASE);
  ({ replicas, ch, pg } = stores);
}, 120_000);

afterAll(async () => stores?.release(), 60_000);

/** The 10th of the month four months back, noon UTC: a partition (toYYYYMM) nothing else writes. */
function oldMonth(): Date {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 4, 10, 12));
}

const partitionOf = (d: Date) => `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}`;

it('erases a link\'s scans of an old month on every replica, from scans and every rollup, leaving the other link\'s', async () => {
  const workspace = await new Workspaces(pg).create('erasure on replicas', 'free');
  const erased = randomUUID();
  const kept = randomUUID();
  const at = oldMonth();
  // 30 scans of one link and 20 of another over a few hours, stored as the sink stores them: into
  // scans_input with a quorum (every rollup counts each: a variant and a QR trigger).
  await ch.exec(sql`INSERT INTO scans_input (scan_id, click_id, workspace_id, link_id, short_id, campaign_id, ts, destination, country, region, city, device, os, browser, referrer, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content, is_bot, user_agent, visitor_id, variant, trigger)
    SELECT generateUUIDv4(), '', ${workspace.id}, if(number < 30, ${erased}, ${kept}), 'old', '', ${at} + (number % 5) * 3600, 'https://example.com/old',
           'DE', '', '', 'mobile', 'iOS', 'Safari', '', '', '', '', '', '', '', 0, '', concat('v', toString(number)), 'https://example.com/b', 'qr'
      FROM numbers(50)`, { settings: await insertSettings(ch, 'scans') });
  // That insert is the old month's last quorum part (as ZooKeeper holds it): the erasure's DELETE covers it.
  const partition = partitionOf(at);
  const [{ value }] = JSON.parse(await replicas.query(1, `SELECT value FROM system.zookeeper WHERE path = '/clickhouse/tables/01/${DATABASE}/scans/quorum' AND name = 'last_part' FORMAT JSON`)).data;
  expect(parseLastParts(value).map((p) => p.partition)).toContain(partition);

  await pg.query("INSERT INTO scan_erasures (workspace_id, kind, link_id) VALUES ($1, 'link', $2)", [workspace.id, erased]);
  const privacy = new ScanPrivacy({ ch, pg, log: SILENT, sinkLocks: [], intervalMs: 60_000, retentionEveryMs: 86_400_000, mutationTimeoutMs: 60_000, arrivalMs: 0, maxAttempts: 1, retryBaseMs: 60_000 });
  expect(await privacy.runErasures()).toBe(1);
  const { rows: [erasure] } = await pg.query('SELECT status, scans::int AS scans, attempts FROM scan_erasures WHERE workspace_id = $1', [workspace.id]);
  expect(erasure).toEqual({ status: 'done', scans: 30, attempts: 0 });

  for (const replica of REPLICAS) {
    // Done means done on each replica: no mutation left, and none of the erased link's rows served, before any sync.
    const left = await replicas.query(replica, `SELECT count() FROM system.mutations WHERE database = '${DATABASE}' AND is_done = 0`);
    const erasedRows = await replicas.query(replica, `SELECT
      (SELECT count() FROM ${DATABASE}.scans WHERE link_id = '${erased}'),
      (SELECT count() FROM ${DATABASE}.scans_link_dims WHERE link_id = '${erased}'),
      (SELECT count() FROM ${DATABASE}.scans_link_dims_daily WHERE link_id = '${erased}'),
      (SELECT count() FROM ${DATABASE}.scans_link_visitors WHERE link_id = '${erased}'),
      (SELECT count() FROM ${DATABASE}.scans_link_triggers WHERE link_id = '${erased}'),
      (SELECT count() FROM ${DATABASE}.scans_link_variants WHERE link_id = '${erased}')`);
    expect({ replica, left: left.trim(), erasedRows: erasedRows.trim() }).toEqual({ replica, left: '0', erasedRows: '0\t0\t0\t0\t0\t0' });
    // Once it has the rebuilt rollup rows (a quorum insert: two of three had them when it answered), every rollup counts the 20 left once.
    for (const table of ROLLUP_TABLES) await replicas.query(replica, `SYSTEM SYNC REPLICA ${DATABASE}.${table}`);
    const { counts, wrong } = rollupCounts(await replicas.query(replica, rollupCountsQuery(DATABASE, [workspace.id])));
    expect({ replica, scans: counts.scans, wrong }).toEqual({ replica, scans: 20, wrong: [] });
    // The marker that freed the month: in scans itself, in no workspace, never in a rollup's counts (the sums above).
    const markers = await replicas.query(replica, `SELECT count() > 0, countIf(workspace_id != '' OR link_id != '' OR visitor_id != '') FROM ${DATABASE}.scans WHERE toYYYYMM(ts) = ${partition} AND scan_id = ''`);
    expect({ replica, markers: markers.trim() }).toEqual({ replica, markers: '1\t0' });
  }
}, 90_000);
