// Erasing a busy link's scans (issue 50): a link with 10 million scans (BENCH_SCANS) over three
// years of hours (26,280 distinct hours) in ClickHouse, erased by the privacy runner itself
// (ScanPrivacy.runErasures, src/links/privacy/scan-privacy.ts: the hours counted in ClickHouse,
// the scans' mutation, the rollups' delete mutations over hour ranges and their re-insert, the
// Postgres scrub), against a baseline in the same run: a count() of the same rows, three times
// (median). Measured: wall time, and this process's memory (RSS sampled every 20 ms, peak over the
// start of each step): the runner runs in the scan sink's worker, which read every scan_id and
// hour of the link into memory before. Another link of the same workspace keeps 10,000 scans,
// which the rollups must still count after. Its own Postgres and ClickHouse databases, dropped at
// the end. Rows are inserted with INSERT … SELECT from numbers(), the views detached, then every
// rollup filled by its view's own SELECT (as the migrations backfill).
// Results: bench/results/link-erasure.json.   Run: node bench/link-erasure.bench.ts
import pg from 'pg';
import { createClickHouse } from '../src/platform/clickhouse/client.ts';
import { ident, sql, SqlFragment } from '../src/platform/clickhouse/literal.ts';
import { migrateClickHouse } from '../src/platform/clickhouse/migrate.ts';
import { loadConfig } from '../src/platform/config.ts';
import { createLogger } from '../src/platform/logger.ts';
import { migratePostgres } from '../src/platform/postgres/migrate.ts';
import { createPool } from '../src/platform/postgres/pool.ts';
import { ScanPrivacy } from '../src/links/privacy/scan-privacy.ts';
import { scanRollups } from '../src/links/privacy/scan-rollups.ts';
import { BENCH_ENV, writeResult } from './lib.ts';

const SCANS = Number(process.env.BENCH_SCANS ?? 10_000_000);
const OTHER_SCANS = 10_000;
const HOURS = 3 * 365 * 24;
const CHUNK = 1_000_000;
const DATABASE = 'linkmail_bench_link_erasure';
const TIMEOUT = 3_600_000;
const WORKSPACE = '00000000-0000-4000-8000-000000000050';
const LINK = '00000000-0000-4000-8000-000000000051';
const OTHER_LINK = '00000000-0000-4000-8000-000000000052';

const postgresUrl = new URL(BENCH_ENV.DATABASE_URL!);
postgresUrl.pathname = `/${DATABASE}`;
const config = loadConfig({ ...process.env, ...BENCH_ENV, DATABASE_URL: postgresUrl.toString(), CLICKHOUSE_DATABASE: DATABASE });
const log = createLogger({ LOG_LEVEL: 'warn' });
const ch = createClickHouse(config, DATABASE, TIMEOUT);
const server = createClickHouse(config, '', TIMEOUT);
const adminUrl = new URL(postgresUrl);
adminUrl.pathname = '/postgres';
const now = Math.floor(Date.now() / 3_600_000) * 3600;

/** Wall time and this process's peak RSS growth while `work` runs. */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; rssPeakGrowthMiB: number }> {
  global.gc?.();
  const startRss = process.memoryUsage().rss;
  let peak = startRss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const start = performance.now();
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, ms: Math.round(performance.now() - start), rssPeakGrowthMiB: Math.round(((peak - startRss) / 2 ** 20) * 10) / 10 };
  } finally {
    clearInterval(sampler);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const countOf = async (where: SqlFragment) => Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM scans WHERE ${where}`))[0]!.n);

/** Scans of a link: one every HOURS·3600/rows seconds back from now, so every hour of three years has some. */
const insertScans = (link: string, from: number, rows: number, total: number) => ch.exec(sql`
  INSERT INTO scans (scan_id, click_id, workspace_id, link_id, short_id, campaign_id, ts, destination, country, region, city, device, os, browser,
                     referrer, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content, is_bot, user_agent, visitor_id, variant, trigger)
  SELECT concat(${link}, '-', toString(number)), '', ${WORKSPACE}, ${link}, 'busy', '', toDateTime(${now} - 1 - intDiv(number * ${HOURS * 3600}, ${total})), 'https://example.com/busy',
         ['US','DE','FR','GB','IN'][number % 5 + 1], '', '', ['mobile','desktop','tablet'][number % 3 + 1], ['iOS','Android','Windows'][number % 3 + 1], ['Safari','Chrome','Firefox'][number % 3 + 1],
         '', if(number % 3 = 0, 'news.example.org', ''), if(number % 10 = 0, 'newsletter', ''), '', '', '', '', 0, '',
         concat('v', toString(number % 100000)), '', if(number % 4 = 0, 'qr', 'link')
    FROM numbers(${from}, ${rows})
  SETTINGS max_block_size = 200000`);

const admin = new pg.Client({ connectionString: adminUrl.toString() });
await admin.connect();
const pool = createPool(config, { max: 4 });
try {
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  await migratePostgres(config.DATABASE_URL, log);
  await server.exec(sql`DROP DATABASE IF EXISTS ${ident(DATABASE)}`);
  await migrateClickHouse(config, log);
  await pool.query("INSERT INTO workspaces (id, name, plan) VALUES ($1, 'bench', 'enterprise')", [WORKSPACE]);

  const rollups = await scanRollups(ch);
  const views = (await ch.rows<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${DATABASE} AND engine = 'MaterializedView'`)).map((v) => v.name);
  for (const view of views) await ch.exec(sql`DETACH TABLE ${ident(view)}`);
  const insertStart = performance.now();
  for (let from = 0; from < SCANS; from += CHUNK) {
    await insertScans(LINK, from, Math.min(CHUNK, SCANS - from), SCANS);
    console.log(`inserted ${Math.min(from + CHUNK, SCANS)} scans`);
  }
  await insertScans(OTHER_LINK, 0, OTHER_SCANS, OTHER_SCANS);
  const insertMs = Math.round(performance.now() - insertStart);
  const backfillStart = performance.now();
  for (const rollup of rollups) {
    const select = rollup.select.replace('{source}', () => 'scans');
    await ch.exec(new SqlFragment(`INSERT INTO \`${rollup.table}\` SELECT ${rollup.columns.map((c) => `\`${c}\``).join(', ')} FROM (${select}) SETTINGS max_bytes_before_external_group_by = 400000000`));
    console.log(`filled ${rollup.table}`);
  }
  const backfillMs = Math.round(performance.now() - backfillStart);
  for (const view of views) await ch.exec(sql`ATTACH TABLE ${ident(view)}`);
  const linkScans = sql`workspace_id = ${WORKSPACE} AND link_id = ${LINK}`;
  const hours = Number((await ch.rows<{ n: string }>(sql`SELECT uniqExact(toStartOfHour(ts)) AS n FROM scans WHERE ${linkScans}`))[0]!.n);
  console.log({ insertMs, backfillMs, hours });

  // The baseline: a count of the same rows.
  const counts = [];
  for (let i = 0; i < 3; i++) counts.push(await measured(() => countOf(linkScans)));
  const count = { ms: median(counts.map((c) => c.ms)), rssPeakGrowthMiB: median(counts.map((c) => c.rssPeakGrowthMiB)), scans: counts[0]!.result };
  console.log('count', count);

  // The erasure, by the runner as the scan sink's worker runs it (no sink to hold here).
  const { rows: [erasure] } = await pool.query<{ id: string }>("INSERT INTO scan_erasures (workspace_id, kind, link_id) VALUES ($1, 'link', $2) RETURNING id", [WORKSPACE, LINK]);
  const runner = new ScanPrivacy({ ch, pg: pool, log, sinkLocks: [], intervalMs: 15_000, retentionEveryMs: 86_400_000, mutationTimeoutMs: TIMEOUT, arrivalMs: 600_000, maxAttempts: 1, retryBaseMs: 0 });
  const erased = await measured(() => runner.runErasures());
  const { rows: [outcome] } = await pool.query<{ status: string; scans: string; last_error: string | null }>('SELECT status, scans, last_error FROM scan_erasures WHERE id = $1', [erasure!.id]);
  console.log('erasure', erased, outcome);

  // Every rollup agrees with the scans left: the other link's, none of the erased one's.
  const [agree] = await ch.rows<{ left: string; erased: string; dims: string; daily: string }>(sql`
    SELECT (SELECT count() FROM scans WHERE workspace_id = ${WORKSPACE}) AS left,
           (SELECT count() FROM scans WHERE ${linkScans}) AS erased,
           (SELECT sum(scans) FROM scans_dims WHERE workspace_id = ${WORKSPACE} AND dim = 'agent') AS dims,
           (SELECT sum(scans) FROM scans_link_dims_daily WHERE workspace_id = ${WORKSPACE} AND dim = 'visit') AS daily`);
  const rollupsAgree = Number(agree!.left) === OTHER_SCANS && Number(agree!.erased) === 0 && Number(agree!.dims) === OTHER_SCANS && Number(agree!.daily) === OTHER_SCANS;
  console.log({ rollupsAgree, ...agree });

  writeResult('link-erasure', {
    note: 'ClickHouse 18.16; one link\'s erasure by ScanPrivacy.runErasures against count() of the same rows (median of 3), wall time and this process\'s peak RSS growth (sampled every 20 ms).',
    scans: SCANS, otherLinkScans: OTHER_SCANS, distinctHours: hours, insertMs, rollupBackfillMs: backfillMs,
    count,
    erasure: { ms: erased.ms, rssPeakGrowthMiB: erased.rssPeakGrowthMiB, finished: erased.result, status: outcome!.status, scansFound: Number(outcome!.scans), error: outcome!.last_error },
    erasureOverCount: Math.round((erased.ms / count.ms) * 10) / 10,
    rollupsAgreeAfter: rollupsAgree,
  });
} finally {
  await server.exec(sql`DROP DATABASE IF EXISTS ${ident(DATABASE)}`).catch(() => undefined);
  await pool.end();
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`).catch(() => undefined);
  await admin.end();
  await ch.close();
  await server.close();
}
