// The contact import's memory and speed over a million rows: POST /api/v1/contacts/import
// streams 45 MB of CSV (1,000,000 rows) to an ingress process of its own, whose peak RSS
// (VmHWM) must not grow with the rows: a 20,000-row import first sets what an import needs at
// all, then the million; held at once, the body would take 90 MB as a string and its parsed
// rows about 200 MB more. The baseline, in the same run: the same million contacts made by one
// INSERT … SELECT in Postgres (then removed), in rows per second. (The suite's
// contact-import.test.ts checks that rows are written while the body is still arriving.)
// Results: bench/results/contact-import.json. Run: node bench/contact-import.bench.ts
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import pg from 'pg';
import { BENCH_ENV, deleteRunResources, freePort, start, writeResult } from './lib.ts';

const ROWS = 1_000_000;
const WARM_UP = 20_000;
/** The peak may move by what garbage collection lets pile up between collections (31 to 79 MB seen). */
const PEAK_GROWTH_LIMIT_MB = 120;

const admin = { authorization: `Bearer ${BENCH_ENV.ADMIN_TOKEN}`, 'content-type': 'application/json' };
async function request(url: string, method: string, body?: unknown): Promise<any> {
  const res = await fetch(url, { method, headers: admin, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Resident memory of a process now, and its peak so far, in MB. */
function memory(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return { rss: Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024, peak: Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024 };
}

/** Streams `rows` generated CSV rows as the request body, generated as the request reads them. */
function postCsv(base: string, key: string, rows: number): Promise<{ status: number; body: any }> {
  let i = 0;
  const body = new Readable({
    read() {
      if (i === 0) this.push('email,first_name,plan\n');
      let chunk = '';
      for (let n = 0; n < 2000 && i < rows; n++, i++) chunk += `user${i}@bulk.example.com,User ${i},${i % 2 ? 'pro' : 'free'}\n`;
      this.push(chunk || null);
    },
  });
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}/api/v1/contacts/import`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    body.pipe(req);
  });
}

/** The baseline: the same rows made by Postgres alone, for an organization of their own (then removed). */
async function bareInsert(base: string, db: pg.Pool) {
  const org = await request(`${base}/admin/v1/organizations`, 'POST', { name: 'bench-import-baseline', plan: 'pro' });
  const t0 = performance.now();
  const { rowCount } = await db.query(
    `INSERT INTO mail_contacts (organization_id, email, first_name, status, properties)
     SELECT $1, 'user' || i || '@bulk.example.com', 'User ' || i, 'subscribed', jsonb_build_object('plan', CASE WHEN i % 2 = 1 THEN 'pro' ELSE 'free' END)
       FROM generate_series(0, $2::int - 1) AS i`,
    [org.id, ROWS],
  );
  const seconds = (performance.now() - t0) / 1000;
  await db.query('DELETE FROM mail_contacts WHERE organization_id = $1', [org.id]);
  return { rows: rowCount ?? 0, seconds: Number(seconds.toFixed(2)), perSecond: Math.round((rowCount ?? 0) / seconds) };
}

const topicPrefix = `bench-contact-import-${Date.now()}`;
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const db = new pg.Pool({ connectionString: BENCH_ENV.DATABASE_URL, max: 2 });
console.log('starting the ingress…');
const ingress = await start('src/main.ts', { TOPIC_PREFIX: topicPrefix, HTTP_PORT: String(port), METRICS_PORT: '-1', PUBLIC_BASE_URL: base, API_RATE_LIMIT_PER_SEC: '1000' }, 'ingress listening');
try {
  const pid = ingress.child.pid!;
  const org = await request(`${base}/admin/v1/organizations`, 'POST', { name: 'bench-import', plan: 'pro' });
  const { key } = await request(`${base}/admin/v1/organizations/${org.id}/keys`, 'POST', { name: 'bench', kind: 'full', rate_limit: 1000 });
  const bare = await bareInsert(base, db);
  console.log(`baseline INSERT … SELECT: ${bare.perSecond} rows/s`);
  // A small import first: what the process needs for an import at all.
  const warm = await postCsv(base, key, WARM_UP);
  if (warm.status !== 200) throw new Error(`warm-up import: ${warm.status} ${JSON.stringify(warm.body)}`);
  const before = memory(pid);
  const t0 = performance.now();
  const res = await postCsv(base, key, ROWS);
  const seconds = (performance.now() - t0) / 1000;
  const after = memory(pid);
  if (res.status !== 200 || res.body.rows !== ROWS || res.body.created !== ROWS - WARM_UP || res.body.updated !== WARM_UP || res.body.rejected !== 0) {
    throw new Error(`import: ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
  }
  const { rows } = await db.query('SELECT count(*)::int AS n FROM mail_contacts WHERE organization_id = $1', [org.id]);
  if (rows[0].n !== ROWS) throw new Error(`${rows[0].n} contacts stored, not ${ROWS}`);
  const perSecond = Math.round(ROWS / seconds);
  const peakGrowthMb = Math.round(after.peak - before.peak);
  console.log(`import of ${ROWS} rows: ${seconds.toFixed(1)} s (${perSecond}/s); RSS ${before.rss.toFixed(0)} → ${after.rss.toFixed(0)} MB, peak ${before.peak.toFixed(0)} → ${after.peak.toFixed(0)} MB`);
  const result = {
    benchmark: 'contact-import',
    rows: ROWS,
    bodyMb: Number((Buffer.byteLength('user999999@bulk.example.com,User 999999,pro\n') * ROWS / 1024 ** 2).toFixed(0)),
    baseline: bare,
    import: { seconds: Number(seconds.toFixed(2)), perSecond },
    ratio: Number((perSecond / bare.perSecond).toFixed(3)),
    memory: { rssBeforeMb: Math.round(before.rss), rssAfterMb: Math.round(after.rss), peakBeforeMb: Math.round(before.peak), peakAfterMb: Math.round(after.peak), peakGrowthMb },
    met: { peakGrowthUnder120Mb: peakGrowthMb < PEAK_GROWTH_LIMIT_MB },
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('contact-import', result);
  await db.query('DELETE FROM mail_contacts WHERE organization_id = $1', [org.id]);
} finally {
  await ingress.stop();
  await db.end();
  await deleteRunResources(topicPrefix);
}
