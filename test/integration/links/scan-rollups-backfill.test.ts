// Migrations 004 and 006 on a database that already holds scans: their
// INSERT … SELECT fills the rollups with them, a run cut short and run again
// whole counts nothing twice, and their views keep the rollups up with later
// inserts. Then 009, which moves the views onto scans_input (run again whole
// too: its ADD COLUMNs are passed over), after which inserts go there.
// Checked against counts and estimates over the scans table, in a database of
// this test's own.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClickHouse, type ClickHouse } from '../../../src/platform/clickhouse/client.ts';
import { ident, sql, SqlFragment } from '../../../src/platform/clickhouse/literal.ts';
import { CLICKHOUSE_MIGRATIONS_DIR, migrateClickHouse } from '../../../src/platform/clickhouse/migrate.ts';
import { createLogger } from '../../../src/platform/logger.ts';
import { onEveryServer, replicasInStep } from '../../support/clickhouse-servers.ts';
import { testConfig } from '../../support/env.ts';

const base = testConfig();
const config = { ...base, CLICKHOUSE_DATABASE: `${base.CLICKHOUSE_DATABASE}_backfill` };
const log = createLogger({ LOG_LEVEL: 'warn' }, 'backfill-test');
const dir = mkdtempSync(join(tmpdir(), 'ch-migrations-'));
const FILTERED = '004_scan_filtered_rollups.sql';
const COMBINED = '006_scan_rollup_combinations.sql';
const INPUT = '009_scan_input.sql';
let ch: ClickHouse;

function scans(n: number) {
  const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  return Array.from({ length: n }, (_, i) => ({
    scan_id: randomUUID(), click_id: '', workspace_id: `ws-${i % 2}`, link_id: `link-${i % 5}`, short_id: `s${i % 5}`, campaign_id: '',
    ts: Math.floor((hour - (i % 30) * 3_600_000) / 1000), destination: 'https://example.com/', country: ['US', 'GB', ''][i % 3], region: '',
    city: ['Boston', '', 'Leeds'][i % 3], device: ['mobile', 'desktop'][i % 2], os: '', browser: ['Safari', 'Chrome', ''][i % 3], referrer: '',
    referrer_host: ['', 'news.example'][i % 2], utm_source: ['', 'flyer', 'poster', ''][i % 4], utm_medium: '', utm_campaign: '', utm_term: '',
    utm_content: '', is_bot: i % 7 === 0 ? 1 : 0, user_agent: '', visitor_id: `v${i % 37}`,
  }));
}

/** Each filtered rollup against the scans table: scans per link, country, hour and bot flag; devices, cities and browsers; visitors per link, per link and day, and per country. */
async function expectRollupsMatchScans() {
  // Our own fixed queries, no input in them.
  const same = async (rollup: string, raw: string) => expect(await ch.rows(new SqlFragment(rollup))).toEqual(await ch.rows(new SqlFragment(raw)));
  await same(
    `SELECT workspace_id, link_id, country, hour, is_bot, toString(sum(scans)) AS n FROM scans_link_dims WHERE dim = 'total' GROUP BY workspace_id, link_id, country, hour, is_bot ORDER BY workspace_id, link_id, country, hour, is_bot`,
    `SELECT workspace_id, link_id, country, toStartOfHour(ts) AS hour, is_bot, toString(count()) AS n FROM scans GROUP BY workspace_id, link_id, country, hour, is_bot ORDER BY workspace_id, link_id, country, hour, is_bot`,
  );
  await same(
    `SELECT workspace_id, country, is_bot, value, toString(sum(scans)) AS n FROM scans_country_dims WHERE dim = 'device' GROUP BY workspace_id, country, is_bot, value ORDER BY workspace_id, country, is_bot, value`,
    `SELECT workspace_id, country, is_bot, device AS value, toString(count()) AS n FROM scans WHERE device != '' GROUP BY workspace_id, country, is_bot, value ORDER BY workspace_id, country, is_bot, value`,
  );
  await same(
    `SELECT workspace_id, link_id, value, toString(sum(scans)) AS n FROM scans_link_dims WHERE dim = 'city' GROUP BY workspace_id, link_id, value ORDER BY workspace_id, link_id, value`,
    `SELECT workspace_id, link_id, concat(country, '\\t', city) AS value, toString(count()) AS n FROM scans WHERE city != '' GROUP BY workspace_id, link_id, value ORDER BY workspace_id, link_id, value`,
  );
  await same(
    `SELECT workspace_id, link_id, toString(uniqHLL12Merge(visitors)) AS v FROM scans_link_visitors GROUP BY workspace_id, link_id ORDER BY workspace_id, link_id`,
    `SELECT workspace_id, link_id, toString(uniqHLL12(visitor_id)) AS v FROM scans GROUP BY workspace_id, link_id ORDER BY workspace_id, link_id`,
  );
  await same(
    `SELECT workspace_id, link_id, country, day, is_bot, value, toString(sum(scans)) AS n FROM scans_link_dims_daily WHERE dim = 'browser' GROUP BY workspace_id, link_id, country, day, is_bot, value ORDER BY workspace_id, link_id, country, day, is_bot, value`,
    `SELECT workspace_id, link_id, country, toStartOfDay(ts, 'UTC') AS day, is_bot, browser AS value, toString(count()) AS n FROM scans WHERE browser != '' GROUP BY workspace_id, link_id, country, day, is_bot, value ORDER BY workspace_id, link_id, country, day, is_bot, value`,
  );
  await same(
    `SELECT workspace_id, link_id, day, toString(uniqHLL12Merge(visitors)) AS v FROM scans_link_visitors_daily GROUP BY workspace_id, link_id, day ORDER BY workspace_id, link_id, day`,
    `SELECT workspace_id, link_id, toStartOfDay(ts, 'UTC') AS day, toString(uniqHLL12(visitor_id)) AS v FROM scans GROUP BY workspace_id, link_id, day ORDER BY workspace_id, link_id, day`,
  );
  await same(
    `SELECT workspace_id, country, toString(uniqHLL12Merge(visitors)) AS v FROM scans_country_visitors GROUP BY workspace_id, country ORDER BY workspace_id, country`,
    `SELECT workspace_id, country, toString(uniqHLL12(visitor_id)) AS v FROM scans GROUP BY workspace_id, country ORDER BY workspace_id, country`,
  );
}

/** The dimension rollups of 006 against the scans table: visit and agent rows (one a scan), combined UTM rows, cities, and no total or row of a group stored combined or in the key. */
async function expectCombinedRollupsMatchScans() {
  // Our own fixed queries, no input in them.
  const same = async (rollup: string, raw: string) => expect(await ch.rows(new SqlFragment(rollup))).toEqual(await ch.rows(new SqlFragment(raw)));
  const VISIT = `concat(device, '\\t', os, '\\t', browser, '\\t', referrer_host)`;
  const UTM = `concat(utm_source, '\\t', utm_medium, '\\t', utm_campaign, '\\t', utm_term, '\\t', utm_content)`;
  await same(
    `SELECT workspace_id, link_id, country, hour, is_bot, toString(sum(scans)) AS n FROM scans_link_dims WHERE dim = 'visit' GROUP BY workspace_id, link_id, country, hour, is_bot ORDER BY workspace_id, link_id, country, hour, is_bot`,
    `SELECT workspace_id, link_id, country, toStartOfHour(ts) AS hour, is_bot, toString(count()) AS n FROM scans GROUP BY workspace_id, link_id, country, hour, is_bot ORDER BY workspace_id, link_id, country, hour, is_bot`,
  );
  await same(
    `SELECT workspace_id, link_id, country, day, is_bot, value, toString(sum(scans)) AS n FROM scans_link_dims_daily WHERE dim = 'visit' GROUP BY workspace_id, link_id, country, day, is_bot, value ORDER BY workspace_id, link_id, country, day, is_bot, value`,
    `SELECT workspace_id, link_id, country, toStartOfDay(ts, 'UTC') AS day, is_bot, ${VISIT} AS value, toString(count()) AS n FROM scans GROUP BY workspace_id, link_id, country, day, is_bot, value ORDER BY workspace_id, link_id, country, day, is_bot, value`,
  );
  await same(
    `SELECT workspace_id, country, is_bot, value, toString(sum(scans)) AS n FROM scans_country_dims WHERE dim = 'utm' GROUP BY workspace_id, country, is_bot, value ORDER BY workspace_id, country, is_bot, value`,
    `SELECT workspace_id, country, is_bot, ${UTM} AS value, toString(count()) AS n FROM scans WHERE utm_source != '' GROUP BY workspace_id, country, is_bot, value ORDER BY workspace_id, country, is_bot, value`,
  );
  await same(
    `SELECT workspace_id, link_id, value, toString(sum(scans)) AS n FROM scans_link_dims WHERE dim = 'city' GROUP BY workspace_id, link_id, value ORDER BY workspace_id, link_id, value`,
    `SELECT workspace_id, link_id, concat(country, '\\t', city) AS value, toString(count()) AS n FROM scans WHERE city != '' GROUP BY workspace_id, link_id, value ORDER BY workspace_id, link_id, value`,
  );
  await same(
    `SELECT workspace_id, hour, toString(sum(scans)) AS n FROM scans_dims WHERE dim = 'agent' GROUP BY workspace_id, hour ORDER BY workspace_id, hour`,
    `SELECT workspace_id, toStartOfHour(ts) AS hour, toString(count()) AS n FROM scans GROUP BY workspace_id, hour ORDER BY workspace_id, hour`,
  );
  await same(
    `SELECT workspace_id, dim, value, toString(sum(scans)) AS n FROM scans_dims WHERE dim IN ('link', 'country', 'referrer') GROUP BY workspace_id, dim, value ORDER BY workspace_id, dim, value`,
    `SELECT workspace_id, dim, value, toString(count()) AS n FROM scans ARRAY JOIN ['link', 'country', 'referrer'] AS dim, [short_id, country, referrer_host] AS value WHERE value != '' OR dim = 'referrer' GROUP BY workspace_id, dim, value ORDER BY workspace_id, dim, value`,
  );
  const [left] = await ch.rows<{ n: string }>(new SqlFragment(`SELECT toString(
    (SELECT count() FROM scans_link_dims WHERE dim IN ('total', 'link', 'country', 'agent', 'referrer', 'device', 'os', 'browser', 'utm_source')) +
    (SELECT count() FROM scans_link_dims_daily WHERE dim IN ('total', 'link', 'country', 'agent', 'referrer', 'device', 'utm_medium')) +
    (SELECT count() FROM scans_country_dims WHERE dim IN ('total', 'country', 'device', 'utm_source')) +
    (SELECT count() FROM scans_dims WHERE dim IN ('total', 'device', 'browser', 'utm_source'))) AS n`));
  expect(left!.n).toBe('0');
}

beforeAll(async () => {
  await onEveryServer(config, sql`DROP DATABASE IF EXISTS ${ident(config.CLICKHOUSE_DATABASE)}`, '');
  for (const file of readdirSync(CLICKHOUSE_MIGRATIONS_DIR)) if (file < FILTERED) copyFileSync(join(CLICKHOUSE_MIGRATIONS_DIR, file), join(dir, file));
  await migrateClickHouse(config, log, dir);
  ch = createClickHouse(config);
}, 60_000);

afterAll(async () => {
  await ch?.close();
  await onEveryServer(config, sql`DROP DATABASE IF EXISTS ${ident(config.CLICKHOUSE_DATABASE)}`, '');
});

/**
 * Applies the migration files up to `last` (those after the ones applied so far), checks, runs
 * `last` again whole as after a run cut short, checks, inserts more scans and checks again.
 */
async function appliesOnceThenKeepsUp(last: string, expectMatch: () => Promise<void>) {
  const applied = new Set(readdirSync(dir));
  for (const file of readdirSync(CLICKHOUSE_MIGRATIONS_DIR)) if (file <= last && !applied.has(file)) copyFileSync(join(CLICKHOUSE_MIGRATIONS_DIR, file), join(dir, file));
  await migrateClickHouse(config, log, dir);
  await expectMatch();

  // A run cut short is run again whole: forget that it was applied, and apply it again.
  await ch.exec(sql`ALTER TABLE schema_migrations DELETE WHERE name = ${last}`);
  await new Promise((r) => setTimeout(r, 500)); // mutations are asynchronous
  await migrateClickHouse(config, log, dir);
  await expectMatch();

  // Since 009 scans enter through scans_input, whose views store them in scans and the rollups.
  await ch.insert(last >= INPUT ? 'scans_input' : 'scans', scans(300));
  // (On replicas the rollups and the scans table may be read from different ones.)
  await replicasInStep(config);
  await expectMatch();
}

it('fills the filtered rollups from the scans already stored, once, then keeps them up', async () => {
  await ch.insert('scans', scans(500));
  await replicasInStep(config);
  await appliesOnceThenKeepsUp(FILTERED, expectRollupsMatchScans);
}, 120_000);

it('rebuilds the dimension rollups with combined rows from the scans already stored, once, then keeps them up (006)', async () => {
  await appliesOnceThenKeepsUp(COMBINED, expectCombinedRollupsMatchScans);
}, 120_000);

it('moves the views onto scans_input, run again whole after a run cut short, the rollups still exact with later inserts (009)', async () => {
  await appliesOnceThenKeepsUp(INPUT, expectCombinedRollupsMatchScans);
  const marked = await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM scans_dims WHERE block_mark != 0`);
  expect(Number(marked[0]!.n)).toBeGreaterThan(0);
  // ClickHouse feeds scans_input's views in name order: the one storing the scans must come last, so
  // that scans holds a block only once every rollup has it (idempotent-sink.ts). A rollup view added
  // later must be named to sort before store_scans_mv.
  const views = (await ch.rows<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${config.CLICKHOUSE_DATABASE} AND engine = 'MaterializedView' ORDER BY name`)).map((v) => v.name);
  const fromInput: string[] = [];
  for (const name of views) {
    const [shown] = await ch.rows<{ statement: string }>(sql`SHOW CREATE TABLE ${ident(name)}`);
    if (/FROM\s+\S*scans_input\b/.test(shown!.statement)) fromInput.push(name);
  }
  expect(fromInput.length).toBe(11);
  expect(fromInput.at(-1)).toBe('store_scans_mv');
}, 120_000);
