// What erasure and retention cost ClickHouse 18.16 at 10 million scans (issue 43, item 6).
// ClickHouse 18.16 has mutations (ALTER TABLE … DELETE/UPDATE) but no TTL, and a mutation reads
// every part of its table and rewrites whole each part with a matching row, so the privacy runner (src/links/privacy/scan-privacy.ts) batches: per
// run one mutation of `scans`, one of `conversions`, and, for erasures, per rollup one DELETE of the
// affected hours and a re-insert of them from the views' own SELECTs (scan-rollups.ts). This
// measures that mechanism with the runner's own functions, wall time per step:
//   - a visitor's erasure (the scans of one visitor hash: one day's), then 100 visitors in one run;
//   - a retention pass dropping one workspace's scans older than 180 days (no recompute).
// 10M synthetic scans over a year, 5 workspaces, 1,000 links, 1M visitors, in a database of its
// own, dropped at the end. The views are detached while the scans are inserted and every rollup is
// then filled by its view's own SELECT over the whole table (as the migrations backfill): the same
// rows as inserting through the views, in a fraction of the time. Results: bench/results/scan-privacy.json.   Run: node bench/scan-privacy.bench.ts
import { createClickHouse } from '../src/platform/clickhouse/client.ts';
import { ident, inStrings, sql, SqlFragment } from '../src/platform/clickhouse/literal.ts';
import { migrateClickHouse } from '../src/platform/clickhouse/migrate.ts';
import { loadConfig } from '../src/platform/config.ts';
import { createLogger } from '../src/platform/logger.ts';
import { mutate, mutationsDone } from '../src/links/privacy/mutations.ts';
import { bucketsWhere, hourRanges, refill, scanRollups, type AffectedHours } from '../src/links/privacy/scan-rollups.ts';
import { BENCH_ENV, writeResult } from './lib.ts';

const SCANS = Number(process.env.BENCH_SCANS ?? 10_000_000);
/** Scans per INSERT … SELECT (each block expands up to 6-fold in the dimension views). */
const CHUNK = 1_000_000;
const DATABASE = 'linkmail_bench_scan_privacy';
const YEAR_S = 365 * 86_400;
const TIMEOUT = 3_600_000;

const config = loadConfig({ ...process.env, ...BENCH_ENV, CLICKHOUSE_DATABASE: DATABASE });
const ch = createClickHouse(config, DATABASE, TIMEOUT);
const server = createClickHouse(config, '', TIMEOUT);
const now = Math.floor(Date.now() / 1000);

const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
  const start = performance.now();
  const result = await work();
  return [result, Math.round(performance.now() - start)];
};
const count = async (table: string) => Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM ${ident(table)}`))[0]!.n);

/** Scans n … n+CHUNK: one every ~3 s over the past year, keyed to workspace, link, visitor and groups by the row number. */
const insertChunk = (from: number, rows: number) => ch.exec(sql`
  INSERT INTO scans (scan_id, click_id, workspace_id, link_id, short_id, campaign_id, ts, destination, country, region, city, device, os, browser,
                     referrer, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content, is_bot, user_agent, visitor_id, variant, trigger)
  SELECT concat('s', toString(number)), concat('c', toString(number)), concat('ws', toString(number % 5)), concat('link', toString(number % 1000)),
         concat('l', toString(number % 1000)), '', toDateTime(${now} - intDiv(number * ${YEAR_S}, ${SCANS})), 'https://example.com/landing',
         ['US','DE','FR','GB','IN','BR','JP','CA','ES','IT','NL','SE','PL','MX','AU'][number % 15 + 1], '', '',
         ['mobile','mobile','desktop','tablet'][number % 4 + 1], ['iOS','Android','Windows','Mac OS'][number % 4 + 1], ['Safari','Chrome','Chrome','Firefox'][number % 4 + 1],
         '', if(number % 3 = 0, 'news.example.org', ''), if(number % 10 = 0, 'newsletter', ''), '', '', '', '', 0, '',
         concat('v', toString(intDiv(number, 10) % 1000000)), '', if(number % 4 = 0, 'qr', 'link')
    FROM numbers(${from}, ${rows})
  SETTINGS max_block_size = 200000`);

/** One visitor's erasure as the runner does it: find the hours, delete the scans, recompute the hours' rollup rows. */
async function eraseVisitors(workspaceId: string, visitorIds: string[]) {
  const where = sql`workspace_id = ${workspaceId} AND visitor_id IN ${inStrings(visitorIds)}`;
  const [hours, findMs] = await timed(async () => (await ch.rows<{ h: string }>(sql`SELECT DISTINCT toUnixTimestamp(toStartOfHour(ts)) AS h FROM scans WHERE ${where}`)).map((r) => new Date(Number(r.h) * 1000)));
  const [erased] = await timed(async () => Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM scans WHERE ${where}`))[0]!.n));
  const [, scansMs] = await timed(async () => {
    await mutate(ch, 'scans', sql`DELETE WHERE ${where}`);
    await mutationsDone(ch, DATABASE, ['scans'], TIMEOUT, 50);
  });
  const affected: AffectedHours[] = [{ workspaceId, ranges: hourRanges(hours.map((h) => h.getTime()), 128) }];
  const rollups = await scanRollups(ch);
  const [, rollupDeleteMs] = await timed(async () => {
    for (const rollup of rollups) await mutate(ch, rollup.table, sql`DELETE WHERE ${bucketsWhere(rollup, affected)}`);
    await mutationsDone(ch, DATABASE, rollups.map((r) => r.table), TIMEOUT, 50);
  });
  const [, refillMs] = await timed(async () => {
    for (const rollup of rollups) await refill(ch, rollup, affected);
  });
  return { visitors: visitorIds.length, scansErased: erased, hours: hours.length, findMs, scansMutationMs: scansMs, rollupDeleteMutationsMs: rollupDeleteMs, rollupRefillMs: refillMs, totalMs: findMs + scansMs + rollupDeleteMs + refillMs };
}

/** A retention pass for one workspace: its scans and rollup rows before a UTC midnight, no recompute. */
async function retention(workspaceId: string, days: number) {
  const before = new Date((Math.floor(now / 86_400) - days) * 86_400_000);
  const [dropped] = await timed(async () => Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM scans WHERE workspace_id = ${workspaceId} AND ts < ${before}`))[0]!.n));
  const rollups = await scanRollups(ch);
  const [, scansMs] = await timed(async () => {
    await mutate(ch, 'scans', sql`DELETE WHERE workspace_id = ${workspaceId} AND ts < ${before}`);
    await mutationsDone(ch, DATABASE, ['scans'], TIMEOUT, 50);
  });
  const [, rollupsMs] = await timed(async () => {
    for (const rollup of rollups) await mutate(ch, rollup.table, sql`DELETE WHERE workspace_id = ${workspaceId} AND ${ident(rollup.time)} < ${before}`);
    await mutationsDone(ch, DATABASE, rollups.map((r) => r.table), TIMEOUT, 50);
  });
  return { days, scansDropped: dropped, scansMutationMs: scansMs, rollupMutationsMs: rollupsMs, totalMs: scansMs + rollupsMs };
}

/** Whether every rollup still sums to the scans table (the workspace's total), as the tests check. */
async function rollupsAgree(workspaceId: string): Promise<boolean> {
  const [row] = await ch.rows<{ scans: string; dims: string; link: string }>(sql`
    SELECT (SELECT count() FROM scans WHERE workspace_id = ${workspaceId}) AS scans,
           (SELECT sum(scans) FROM scans_dims WHERE workspace_id = ${workspaceId} AND dim = 'agent') AS dims,
           (SELECT sum(scans) FROM scans_link_dims_daily WHERE workspace_id = ${workspaceId} AND dim = 'visit') AS link`);
  return row!.scans === row!.dims && row!.scans === row!.link;
}

try {
  await server.exec(sql`DROP DATABASE IF EXISTS ${ident(DATABASE)}`);
  await migrateClickHouse(config, createLogger({ LOG_LEVEL: 'warn' }));
  const rollupsAtStart = await scanRollups(ch);
  const views = (await ch.rows<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${DATABASE} AND engine = 'MaterializedView'`)).map((v) => v.name);
  for (const view of views) await ch.exec(sql`DETACH TABLE ${ident(view)}`);
  const [, insertMs] = await timed(async () => {
    for (let from = 0; from < SCANS; from += CHUNK) {
      await insertChunk(from, Math.min(CHUNK, SCANS - from));
      console.log(`inserted ${Math.min(from + CHUNK, SCANS)} scans`);
    }
  });
  const [, backfillMs] = await timed(async () => {
    for (const rollup of rollupsAtStart) {
      const select = rollup.select.replace('{source}', () => 'scans');
      await ch.exec(new SqlFragment(`INSERT INTO \`${rollup.table}\` SELECT ${rollup.columns.map((c) => `\`${c}\``).join(', ')} FROM (${select}) SETTINGS max_bytes_before_external_group_by = 400000000`));
      console.log(`filled ${rollup.table}`);
    }
  });
  for (const view of views) await ch.exec(sql`ATTACH TABLE ${ident(view)}`);
  const stored = await count('scans');
  const parts = Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM system.parts WHERE database = ${DATABASE} AND table = 'scans' AND active`))[0]!.n);
  console.log({ stored, parts, insertMs, backfillMs });

  // The visitors: v<k> has the ten scans 10k … 10k+9 (one per ~30 s), all in workspace ws<(10k+i) % 5>; pick those of ws0.
  const one = await eraseVisitors('ws0', [`v${Math.floor(SCANS / 40)}`]);
  console.log('one visitor', one);
  // Visitors v<k> exist for k < SCANS / 10.
  const hundred = await eraseVisitors('ws0', Array.from({ length: 100 }, (_, i) => `v${Math.floor(SCANS / 20) + i * 37}`));
  console.log('100 visitors in one run', hundred);
  const kept = await retention('ws1', 180);
  console.log('retention', kept);
  const agree = (await rollupsAgree('ws0')) && (await rollupsAgree('ws1'));
  console.log({ rollupsAgree: agree });
  writeResult('scan-privacy', {
    note: 'ClickHouse 18.16, wall time per step; a mutation reads every part of its table and rewrites whole each part with a matching row, so a run batches all pending erasures into one mutation per table.',
    scans: stored, scansParts: parts, insertMs, rollupBackfillMs: backfillMs, eraseOneVisitor: one, eraseHundredVisitorsInOneRun: hundred, retentionOneWorkspace180Days: kept, rollupsAgreeAfter: agree,
    rollups: (await scanRollups(ch)).map((r) => r.table),
    rowsLeft: { scans: await count('scans') },
  });
} finally {
  await server.exec(sql`DROP DATABASE IF EXISTS ${ident(DATABASE)}`).catch(() => undefined);
  await ch.close();
  await server.close();
}
