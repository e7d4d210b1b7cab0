// POST /api/v1/contacts/import: NDJSON and CSV, per-row rejections, conflicts,
// and a million streamed rows through a separate ingress process whose memory
// must not grow with the rows.
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, INGRESS_ENV, startIngress, type TestIngress } from '../../support/ingress.ts';
import { organizationWithKey } from '../../support/mail/organizations.ts';
import { childPort, startTs, waitForOutput, type Child } from '../../support/processes.ts';

let ingress: TestIngress;
let url: string;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
  url = ingress.url;
});
afterAll(async () => ingress?.close());

const importBody = (key: string, contentType: string, raw: string, query = '') =>
  call(url, 'POST', `/api/v1/contacts/import${query}`, { key, raw, headers: { 'content-type': contentType } });

describe('contact import', () => {
  it('NDJSON: creates, rejects bad lines with their line numbers, updates on a second import', async () => {
    const { key } = await organizationWithKey(url);
    const lines = [
      JSON.stringify({ email: 'a@example.com', first_name: 'Ann', properties: { plan: 'pro' } }),
      '',
      JSON.stringify({ email: 'not-an-email' }),
      '{"email": broken',
      JSON.stringify({ email: 'b@example.com', status: 'unsubscribed' }),
      JSON.stringify({ email: 'c@example.com', phone: '1' }),
      JSON.stringify([1, 2]),
    ].join('\n');
    const res = await importBody(key, 'application/x-ndjson', lines);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'contact_import', rows: 6, created: 2, updated: 0, rejected: 4, errors_truncated: false });
    expect(res.body.errors.map((e: { line: number; code: string }) => [e.line, e.code])).toEqual([[3, 'invalid_email'], [4, 'invalid_json'], [6, 'unknown_field'], [7, 'invalid_row']]);
    const again = await importBody(key, 'application/x-ndjson', JSON.stringify({ email: 'A@example.com', last_name: 'Lee', properties: { seats: 3 } }) + '\n' + JSON.stringify({ email: 'd@example.com' }));
    expect(again.body).toMatchObject({ rows: 2, created: 1, updated: 1 });
    const ann = await call(url, 'GET', '/api/v1/contacts/a@example.com', { key });
    // The given fields change; properties merge; the rest stays.
    expect(ann.body).toMatchObject({ first_name: 'Ann', last_name: 'Lee', properties: { plan: 'pro', seats: 3 }, status: 'subscribed' });
    const skip = await importBody(key, 'application/x-ndjson', JSON.stringify({ email: 'a@example.com', first_name: 'Changed' }), '?on_conflict=skip');
    expect(skip.body).toMatchObject({ created: 0, skipped: 1 });
    expect((await call(url, 'GET', '/api/v1/contacts/a@example.com', { key })).body.first_name).toBe('Ann');
  });

  it('CSV: header names fields, other columns become properties, quoted fields, bad rows rejected', async () => {
    const { key } = await organizationWithKey(url);
    const csv = '\ufeffEmail,First_Name,last_name,status,company,city\r\n' +
      'x@example.com,"Smith, Jo",Jones,subscribed,"ACME ""Inc""",Oslo\r\n' +
      'bad,Al,,subscribed,,\r\n' +
      'y@example.com,Yu,,unsubscribed,,\r\n' +
      'z@example.com,too,many,columns,in,this,row\r\n' +
      'w@example.com,,,maybe,,\r\n';
    const res = await importBody(key, 'text/csv', csv);
    expect(res.body).toMatchObject({ rows: 5, created: 2, rejected: 3 });
    expect(res.body.errors.map((e: { line: number; code: string }) => [e.line, e.code])).toEqual([[3, 'invalid_email'], [5, 'wrong_column_count'], [6, 'invalid_status']]);
    const x = await call(url, 'GET', '/api/v1/contacts/x@example.com', { key });
    expect(x.body).toMatchObject({ first_name: 'Smith, Jo', last_name: 'Jones', properties: { company: 'ACME "Inc"', city: 'Oslo' } });
    expect((await call(url, 'GET', '/api/v1/contacts/y@example.com', { key })).body).toMatchObject({ status: 'unsubscribed', properties: {} });
  });

  it('refuses what is not an import, and an import larger than the limit', async () => {
    const { key } = await organizationWithKey(url);
    expect((await importBody(key, 'text/csv', 'name,city\r\nx,y\r\n')).body.name).toBe('invalid_csv_header');
    expect((await importBody(key, 'text/csv', 'email\r\n"unterminated\r\n')).body.name).toBe('invalid_csv');
    expect((await importBody(key, 'application/x-ndjson', '')).body.name).toBe('empty_import');
    expect((await call(url, 'POST', '/api/v1/contacts/import', { key, body: [{ email: 'a@example.com' }] })).status).toBe(415);
    expect((await importBody(key, 'text/plain', 'email\na@example.com')).status).toBe(415);
    expect((await importBody(key, 'text/csv', 'email\r\na@example.com\r\n', '?on_conflict=merge')).status).toBe(400);
    expect((await call(url, 'GET', '/api/v1/contacts', { key })).body.data).toEqual([]);
    const small = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000', MAIL_IMPORT_MAX_BYTES: '2048' });
    try {
      const rows = Array.from({ length: 200 }, (_, i) => `r${i}@example.com`).join('\n');
      const res = await call(small.url, 'POST', '/api/v1/contacts/import', { key, raw: `email\n${rows}\n`, headers: { 'content-type': 'text/csv' } });
      expect([res.status, res.body.name]).toEqual([413, 'payload_too_large']);
    } finally {
      await small.close();
    }
  });
});

describe('a million rows, streamed', () => {
  let child: Child;
  let childUrl: string;
  const ROWS = 1_000_000;

  beforeAll(async () => {
    const port = childPort();
    child = startTs('src/main.ts', [], { ...INGRESS_ENV, HTTP_PORT: port, LOG_LEVEL: 'info', API_RATE_LIMIT_PER_SEC: '1000' });
    await waitForOutput(child, 'ingress listening');
    childUrl = `http://127.0.0.1:${port}`;
  });
  afterAll(() => {
    child?.process.kill('SIGTERM');
  });

  /** Resident memory of the ingress now, and its peak so far, in MB. */
  const memory = () => {
    const status = readFileSync(`/proc/${child.process.pid}/status`, 'utf8');
    return { rss: Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024, peak: Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024 };
  };

  /** Streams `rows` generated CSV rows as the request body. */
  function postCsv(key: string, rows: number): Promise<{ status: number; body: any }> {
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
      const req = httpRequest(`${childUrl}/api/v1/contacts/import`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv', 'x-forwarded-for': '192.0.2.1' } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      });
      req.on('error', reject);
      body.pipe(req);
    });
  }

  it('imports 1,000,000 CSV rows while the ingress memory stays flat', async () => {
    const { organizationId, key } = await organizationWithKey(childUrl);
    // A small import first: what the process needs for an import at all.
    await postCsv(key, 20_000);
    const before = memory();
    const res = await postCsv(key, ROWS);
    const after = memory();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ rows: ROWS, created: ROWS - 20_000, updated: 20_000, rejected: 0 });
    const { rows } = await ingress.platform.pg.query('SELECT count(*)::int AS n FROM mail_contacts WHERE organization_id = $1', [organizationId]);
    expect(rows[0].n).toBe(ROWS);
    // The body is 45 MB of CSV: held at once as a string it takes 90 MB, and its million parsed rows
    // about 200 MB more. Streamed, the peak moves by what garbage collection lets pile up between
    // collections: 31 to 79 MB in the runs so far.
    console.log(`import of ${ROWS} rows: RSS ${before.rss.toFixed(0)} → ${after.rss.toFixed(0)} MB, peak ${before.peak.toFixed(0)} → ${after.peak.toFixed(0)} MB`);
    expect(after.peak - before.peak).toBeLessThan(120);
  }, 420_000);
});
