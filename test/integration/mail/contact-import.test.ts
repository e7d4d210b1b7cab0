// POST /api/v1/contacts/import: NDJSON and CSV, per-row rejections, conflicts,
// and a body written in batches as it arrives (the memory of a million-row import:
// bench/contact-import.bench.ts).
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../support/env.ts';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { organizationWithKey } from '../../support/mail/organizations.ts';

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

describe('a streamed import', () => {
  // The body is read as it arrives and written in batches of 1000 rows, each committed on its own
  // while the rest of the body has not come yet: what the import holds at once is a batch, whatever
  // the body's size. The memory of a million-row import (45 MB of CSV) is measured by
  // bench/contact-import.bench.ts (docs/benchmarks.md); here, that rows are written before the body ends.
  it('writes the rows of a body that has not ended yet, in batches, and counts every row when it ends', async () => {
    const { organizationId, key } = await organizationWithKey(url);
    const count = async () => (await ingress.platform.pg.query('SELECT count(*)::int AS n FROM mail_contacts WHERE organization_id = $1', [organizationId])).rows[0].n as number;
    const csv = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => `user${from + k}@bulk.example.com,User ${from + k},${(from + k) % 2 ? 'pro' : 'free'}\n`).join('');
    const body = new Readable({ read() {} });
    const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = httpRequest(`${url}/api/v1/contacts/import`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv', 'x-forwarded-for': '192.0.2.1' } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      });
      req.on('error', reject);
      body.pipe(req);
    });
    let ended = false;
    void answer.finally(() => (ended = true));
    // 5,500 rows, and the body stays open: five batches are written, the half batch waits for more rows.
    body.push('email,first_name,plan\n');
    body.push(csv(0, 5500));
    await eventually(async () => (await count()) === 5000, 30_000, 50);
    expect(ended).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    expect(await count()).toBe(5000);
    // The rest, in chunks, some of them rows already imported (updated).
    for (let from = 5500; from < 20_500; from += 2500) body.push(csv(from, from + 2500));
    body.push(csv(0, 1000));
    body.push(null);
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ rows: 21_500, created: 20_500, updated: 1000, rejected: 0 });
    expect(await count()).toBe(20_500);
    const plan = await call(url, 'GET', '/api/v1/contacts/user20499@bulk.example.com', { key });
    expect(plan.body).toMatchObject({ first_name: 'User 20499', properties: { plan: 'pro' } });
  }, 120_000);
});
