// CSV import of links (issue 43, item 2), through real HTTP: Bitly-style and
// Shlink-style exports, bad rows with their lines and codes, blank and repeated
// rows skipped, a 20,000-row body streamed and written in batches, the row limit
// (413, nothing created), and two workspaces importing the same short IDs at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { call, client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { readTopic } from '../../support/topic-reader.ts';
import { scan } from '../../support/links/scans.ts';
import type { LinkState } from '../../../src/links/changelog/link-state.ts';

let ingress: TestIngress;
beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
});
afterAll(() => ingress?.close());

const importCsv = (key: string, csv: string | ReadableStream<Uint8Array>, contentType = 'text/csv') =>
  typeof csv === 'string'
    ? call(ingress.url, 'POST', '/api/v1/links/import', { key, raw: csv, headers: { 'content-type': contentType } })
    : fetch(`${ingress.url}/api/v1/links/import`, { method: 'POST', body: csv, duplex: 'half', headers: { authorization: `Bearer ${key}`, 'content-type': contentType } } as RequestInit).then(async (res) => ({ status: res.status, body: await res.json() }));

/** Every link of the workspace, through the list API. */
async function allLinks(key: string): Promise<any[]> {
  const links: any[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await client(ingress.url, key).get(`/api/v1/links?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    links.push(...page.body.data);
    cursor = page.body.nextCursor;
  } while (cursor);
  return links;
}

const unique = () => Math.random().toString(36).slice(2, 8);

describe('CSV import', () => {
  it('imports a Bitly-style export (long_url, other columns ignored) with assigned short IDs, on the changelog', async () => {
    const { key } = await workspaceWithKey(ingress.url);
    const csv = [
      'id,created_at,title,long_url,link,custom_domain,tags',
      'bit.ly/3abc,2024-01-02T10:00:00+0000,Spring menu,https://example.com/menu,https://bit.ly/3abc,,print;Menu',
      'bit.ly/3abd,2024-01-03T10:00:00+0000,"Title, with comma",https://example.com/about?x=1,https://bit.ly/3abd,,',
    ].join('\r\n');
    const res = await importCsv(key, csv);
    expect([res.status, res.body]).toEqual([200, { created: 2, skipped: 0, rejected: 0, errors: [] }]);
    const links = await allLinks(key);
    expect(links.map((l) => [l.destination, l.title, l.tags]).sort()).toEqual([
      ['https://example.com/about?x=1', 'Title, with comma', []],
      ['https://example.com/menu', 'Spring menu', ['print', 'menu']],
    ]);
    // On links.changelog like any link, and redirecting.
    const ids = new Set(links.map((l) => l.id));
    await readTopic<LinkState>(ingress.platform.config, 'links.changelog', (m) => [...ids].every((id) => m.some((x) => x.value?.id === id)));
    expect((await scan(ingress.url, links[0].shortId)).status).toBe(302);
  });

  it('imports a Shlink-style export (longUrl, shortCode) keeping its short codes; a taken code is a rejected row, never an overwrite', async () => {
    const { key } = await workspaceWithKey(ingress.url);
    const code = `sh-${unique()}`;
    const csv = `shortCode,shortUrl,longUrl,title,tags,createdAt,visits\n${code},https://s.test/${code},https://example.com/shlink,Shlink one,a;b,2024-01-01,3\n${code}-2,https://s.test/x,https://example.com/two,,,2024-01-01,0\n`;
    const res = await importCsv(key, csv);
    expect(res.body).toEqual({ created: 2, skipped: 0, rejected: 0, errors: [] });
    const links = await allLinks(key);
    expect(links.map((l) => l.shortId).sort()).toEqual([code, `${code}-2`]);
    expect(links.find((l) => l.shortId === code)).toMatchObject({ destination: 'https://example.com/shlink', title: 'Shlink one', tags: ['a', 'b'] });
    // Importing a file naming a taken code: that row is rejected, the link keeps its destination.
    const again = await importCsv(key, `longUrl,shortCode\nhttps://example.com/other,${code}\nhttps://example.com/three,${code}-3\n`);
    expect(again.body).toEqual({ created: 1, skipped: 0, rejected: 1, errors: [{ line: 2, code: 'short_id_taken' }] });
    expect((await allLinks(key)).find((l) => l.shortId === code).destination).toBe('https://example.com/shlink');
  });

  it('rejects bad rows alone with their line (the header is line 1) and the code POST /links gives; skips blank and repeated rows', async () => {
    const { key } = await workspaceWithKey(ingress.url);
    const id = `ok-${unique()}`;
    const rows = [
      'destination,shortId,tags,title,expiresAt', //                      1
      `https://example.com/good,${id},,Good,2099-01-01T00:00:00Z`, //      2 created
      'not a url,,,,', //                                                  3 validation_failed
      'ftp://example.com/file,,,,', //                                     4 invalid_url
      'https://example.com/past,,,,2001-01-01T00:00:00Z', //              5 expiry_in_past
      'https://example.com/date,,,,next tuesday', //                      6 validation_failed
      'https://example.com/short,a,,,', //                                7 validation_failed (short ID too short)
      'https://example.com/reserved,api,,,', //                           8 short_id_reserved
      ',nodest,,,', //                                                    9 validation_failed (no destination)
      '', //                                                              10 skipped (blank)
      `https://example.com/good,${id},,Good,2099-01-01T00:00:00Z`, //      11 skipped (repeats line 2)
      `https://example.com/dup-id,${id},,,`, //                           12 short_id_taken
      `https://example.com/tags,,${Array.from({ length: 21 }, (_, i) => `t${i}`).join(';')},,`, // 13 validation_failed (21 tags)
      'https://example.com/last,,,,', //                                  14 created
    ];
    const res = await importCsv(key, rows.join('\n'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      created: 2,
      skipped: 2,
      rejected: 9,
      errors: [
        { line: 3, code: 'validation_failed' }, { line: 4, code: 'invalid_url' }, { line: 5, code: 'expiry_in_past' }, { line: 6, code: 'validation_failed' },
        { line: 7, code: 'validation_failed' }, { line: 8, code: 'short_id_reserved' }, { line: 9, code: 'validation_failed' }, { line: 12, code: 'short_id_taken' },
        { line: 13, code: 'validation_failed' },
      ],
    });
  });

  it('counts a line break inside a quoted cell once, with CRLF line ends as with LF (issue 55)', async () => {
    const { key } = await workspaceWithKey(ingress.url);
    const rows = (eol: string) => [
      'destination,title', //                                   1
      'not a url,one', //                                       2 validation_failed
      `https://example.com/two,"two${eol}lines${eol}here"`, //  3-5
      'ftp://example.com/three,"x', //                          6 invalid_url (its last line is 7)
      'y"',
      'not a url either,', //                                   8 validation_failed
    ].join(eol);
    const expected = { created: 1, skipped: 0, rejected: 3, errors: [{ line: 2, code: 'validation_failed' }, { line: 7, code: 'invalid_url' }, { line: 8, code: 'validation_failed' }] };
    expect((await importCsv(key, rows('\n'))).body).toEqual(expected);
    expect((await importCsv(key, rows('\r\n'))).body).toEqual(expected);
  });

  it('refuses what is not an import, and more than 100,000 rows, creating nothing', async () => {
    const { key } = await workspaceWithKey(ingress.url);
    expect((await importCsv(key, 'url,name\nhttps://example.com/,x\n')).body.error.code).toBe('missing_destination_column');
    expect((await importCsv(key, 'destination\n"https://example.com/unterminated\n')).body.error.code).toBe('invalid_csv');
    expect((await importCsv(key, 'destination\n')).body.error.code).toBe('empty_import');
    expect((await importCsv(key, '')).body.error.code).toBe('empty_import');
    expect((await call(ingress.url, 'POST', '/api/v1/links/import', { key, body: [{ destination: 'https://example.com/' }] })).status).toBe(415);
    expect((await importCsv(key, 'destination\nhttps://example.com/\n', 'text/plain')).status).toBe(415);
    // Any other content type is 415, application/json too whatever its body (issue 55: it was 400 invalid_json).
    for (const [type, body] of [['application/json', 'destination\nhttps://example.com/\n'], ['application/json', ''], ['application/json', '{'], ['application/octet-stream', 'destination\nhttps://example.com/\n']]) {
      const refused = await importCsv(key, body!, type);
      expect([type, body, refused.status, refused.body.error.code]).toEqual([type, body, 415, 'unsupported_media_type']);
    }
    // 2,000 distinct rows (two batches written) and repeats up to 100,001 rows: 413, and the batches are undone.
    const distinct = Array.from({ length: 2000 }, (_, i) => `https://example.com/limit/${i}`);
    const repeats = Array.from({ length: 98_001 }, () => 'https://example.com/limit/0');
    const over = await importCsv(key, ['destination', ...distinct, ...repeats].join('\n'));
    expect([over.status, over.body.error.code]).toEqual([413, 'too_many_rows']);
    expect(await allLinks(key)).toEqual([]);
    // A key without links:write may not import.
    const reader = (await client(ingress.url, key).post('/api/v1/keys', { name: 'reader', scopes: ['links:read'] })).body.key;
    expect((await importCsv(reader, 'destination\nhttps://example.com/\n')).body.error.code).toBe('insufficient_scope');
    expect(await allLinks(key)).toEqual([]);
  });

  it('streams a 20,000-row body and writes it in batches, not one insert a row', async () => {
    const { key } = await workspaceWithKey(ingress.url);
    // Count the statements that insert links, on the imports' own pool (the real database): its
    // transactions' connect() (no arguments; pool.query asks with a callback) is wrapped, on every pool.
    let inserts = 0;
    const proto = pg.Pool.prototype as { connect: (...args: unknown[]) => unknown };
    const connect = proto.connect;
    proto.connect = async function (this: pg.Pool, ...args: unknown[]) {
      if (args.length > 0) return connect.apply(this, args);
      const c = (await connect.apply(this)) as pg.PoolClient;
      const query = c.query.bind(c) as (...args: unknown[]) => unknown;
      (c as { query: unknown }).query = (...args: unknown[]) => {
        if (typeof args[0] === 'string' && args[0].startsWith('INSERT INTO links ')) inserts++;
        return query(...args);
      };
      return c;
    };
    const prefix = `big-${unique()}`;
    const encoder = new TextEncoder();
    let sent = 0;
    // The body is made as it is read: 500 rows a chunk, no Content-Length.
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(encoder.encode('longUrl,shortCode,tags\n'));
        if (sent >= 20_000) return controller.close();
        const rows = Array.from({ length: 500 }, (_, i) => `https://example.com/big/${sent + i},${prefix}-${sent + i},bulk;import\n`).join('');
        sent += 500;
        controller.enqueue(encoder.encode(rows));
      },
    });
    try {
      const started = Date.now();
      const res = await importCsv(key, body);
      expect([res.status, res.body]).toEqual([200, { created: 20_000, skipped: 0, rejected: 0, errors: [] }]);
      expect(inserts).toBe(20);
      expect(Date.now() - started).toBeLessThan(60_000);
    } finally {
      proto.connect = connect;
    }
    const page = await client(ingress.url, key).get(`/api/v1/links?shortId=${prefix}-19999`);
    expect(page.body.data[0]).toMatchObject({ destination: 'https://example.com/big/19999', tags: ['bulk', 'import'] });
  });

  it('two workspaces importing the same short IDs side by side: each ID goes to one, the other\'s rows are rejected, bad rows stay their own', async () => {
    const [a, b] = [await workspaceWithKey(ingress.url), await workspaceWithKey(ingress.url)];
    const prefix = `both-${unique()}`;
    const rows = (who: string) => Array.from({ length: 1500 }, (_, i) => `https://${who}.example.com/${i},${prefix}-${i}`);
    // A's bad row comes first (line 2): errors lists only the first 1,000 rejected rows, and A may lose most IDs to B.
    const [ra, rb] = await Promise.all([importCsv(a.key, ['destination,shortId', 'not a url,', ...rows('a')].join('\n')), importCsv(b.key, ['destination,shortId', ...rows('b')].join('\n'))]);
    expect([ra.status, rb.status]).toEqual([200, 200]);
    expect(ra.body.created + rb.body.created).toBe(1500);
    expect(ra.body.rejected).toBe(1500 - ra.body.created + 1);
    expect(rb.body.rejected).toBe(1500 - rb.body.created);
    expect(ra.body.errors.find((e: { line: number }) => e.line === 2)).toEqual({ line: 2, code: 'validation_failed' });
    expect([...ra.body.errors, ...rb.body.errors].filter((e: { line: number }) => e.line !== 2).every((e: { code: string }) => e.code === 'short_id_taken')).toBe(true);
    // Each link is its importer's, with its importer's destination.
    const [la, lb] = [await allLinks(a.key), await allLinks(b.key)];
    expect(la.length + lb.length).toBe(1500);
    expect(la.every((l) => l.destination.startsWith('https://a.example.com/'))).toBe(true);
    expect(lb.every((l) => l.destination.startsWith('https://b.example.com/'))).toBe(true);
    expect(new Set([...la, ...lb].map((l) => l.shortId)).size).toBe(1500);
  });
});
