// CSV imports bounded in bytes, time and concurrency (issue 50, issue 55 item 1), through real
// HTTP: a body that pauses or takes too long answers 408 import_stalled (not 500), one over the
// byte cap 413 import_too_large, blank lines count toward the row limit, one import at a time per
// workspace (409 import_running), and ten slow imports from one key (with slow imports of other
// workspaces) leave another workspace's API calls and redirects answering in their usual time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { scan } from '../../support/links/scans.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const unique = () => Math.random().toString(36).slice(2, 8);

/** A CSV body sent as it is made: the header, then `rows` rows, each after `pauseMs`; `pauseAt` pauses `pauseMs` before that row instead. */
function slowBody(prefix: string, rows: number, options: { everyMs?: number; pauseAt?: number; pauseMs?: number }) {
  const encoder = new TextEncoder();
  let sent = -1;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === -1) {
        sent = 0;
        return controller.enqueue(encoder.encode('destination,shortId\n'));
      }
      if (sent >= rows) return controller.close();
      if (options.everyMs) await sleep(options.everyMs);
      if (sent === options.pauseAt) await sleep(options.pauseMs!);
      controller.enqueue(encoder.encode(`https://example.com/${prefix}/${sent},${prefix}-${sent}\n`));
      sent++;
    },
  });
}

const importStream = (base: string, key: string, body: ReadableStream<Uint8Array> | string, headers: Record<string, string> = {}) =>
  fetch(`${base}/api/v1/links/import`, { method: 'POST', body, duplex: 'half', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv', ...headers } } as RequestInit)
    .then(async (res) => ({ status: res.status, connection: res.headers.get('connection'), body: await res.json() }));

const linkCount = async (base: string, key: string) => (await client(base, key).get('/api/v1/links?limit=100')).body.data.length;

describe('import bounds (a short stall timeout and deadline, a 1 MiB cap)', () => {
  let ingress: TestIngress;
  beforeAll(async () => {
    // Postgres' idle-transaction bound as short as the stall's: an import that held its transaction across the body answered 500 here.
    ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', LINK_IMPORT_STALL_TIMEOUT_MS: '2000', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '2000', LINK_IMPORT_DEADLINE_MS: '6000', LINK_IMPORT_MAX_BYTES: String(1024 * 1024) });
  });
  afterAll(() => ingress?.close());

  it('a body that pauses past the stall timeout answers 408 import_stalled, creates nothing, and ends the import', async () => {
    const { key } = await workspaceWithKey(ingress.url);
    // After one row, and after a batch of 1,000 rows was written (the pause outlasting the reading of what came before it).
    for (const [pauseAt, pauseMs] of [[1, 3500], [1001, 6000]] as const) {
      const res = await importStream(ingress.url, key, slowBody(`stall-${unique()}`, pauseAt + 5, { pauseAt, pauseMs }));
      expect([pauseAt, res.status, res.body.error?.code]).toEqual([pauseAt, 408, 'import_stalled']);
      expect(res.connection).toBe('close');
    }
    expect(await linkCount(ingress.url, key)).toBe(0);
    // A pause under the timeout is no stall, and the stalled imports left nothing running.
    const ok = await importStream(ingress.url, key, slowBody(`calm-${unique()}`, 3, { pauseAt: 1, pauseMs: 1000 }));
    expect([ok.status, ok.body]).toEqual([200, { created: 3, skipped: 0, rejected: 0, errors: [] }]);
  });

  it('an upload past the deadline answers 408 import_stalled though it never pauses long', async () => {
    const { key } = await workspaceWithKey(ingress.url);
    const res = await importStream(ingress.url, key, slowBody(`slow-${unique()}`, 100, { everyMs: 500 }));
    expect([res.status, res.body.error.code]).toEqual([408, 'import_stalled']);
    expect(await linkCount(ingress.url, key)).toBe(0);
  });

  it('a body over LINK_IMPORT_MAX_BYTES answers 413 import_too_large, streamed or declared, creating nothing', async () => {
    const { key } = await workspaceWithKey(ingress.url);
    // Long rows, few of them: the cap is passed before reading the rows would take long.
    const rows = Array.from({ length: 2000 }, (_, i) => `https://example.com/big/${i}/${'x'.repeat(600)}`).join('\n');
    const big = `destination\n${rows}\n`;
    expect(big.length).toBeGreaterThan(1024 * 1024);
    // With Content-Length, refused before the body is read.
    const declared = await importStream(ingress.url, key, big);
    expect([declared.status, declared.body.error.code]).toEqual([413, 'import_too_large']);
    // Streamed without one, refused when the cap is passed.
    const encoder = new TextEncoder();
    const chunks = big.match(/[^]{1,65536}/g)!;
    const streamed = await importStream(ingress.url, key, new ReadableStream({ pull: (c) => (chunks.length ? c.enqueue(encoder.encode(chunks.shift()!)) : c.close()) }));
    expect([streamed.status, streamed.body.error.code]).toEqual([413, 'import_too_large']);
    expect(await linkCount(ingress.url, key)).toBe(0);
  });

  it('blank lines count toward the 100,000-row limit', async () => {
    const { key } = await workspaceWithKey(ingress.url);
    const res = await importStream(ingress.url, key, `destination\nhttps://example.com/one\n${'\n'.repeat(100_000)}`);
    expect([res.status, res.body.error.code]).toEqual([413, 'too_many_rows']);
    expect(await linkCount(ingress.url, key)).toBe(0);
    const under = await importStream(ingress.url, key, `destination\nhttps://example.com/one\n${'\n'.repeat(99_998)}`);
    expect([under.status, under.body]).toEqual([200, { created: 1, skipped: 99_998, rejected: 0, errors: [] }]);
  });
});

describe('import concurrency (default bounds)', () => {
  let ingress: TestIngress;
  beforeAll(async () => {
    ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', REDIRECTS_PER_MINUTE_PER_IP: '100000' });
  });
  afterAll(() => ingress?.close());

  it('ten slow imports from one key: one runs, nine get 409 import_running; with slow imports of three other workspaces, another workspace\'s calls and redirects answer in their usual time', async () => {
    const a = await workspaceWithKey(ingress.url);
    const others = await Promise.all([1, 2, 3].map(() => workspaceWithKey(ingress.url)));
    const b = await workspaceWithKey(ingress.url);
    const bLink = (await client(ingress.url, b.key).post('/api/v1/links', { destination: 'https://example.com/b' })).body;
    // B's calls: a read, a write, a list and a redirect, with how long each took.
    const bCalls = async () => {
      const timed = async (what: string, fn: () => Promise<{ status: number }>) => {
        const started = Date.now();
        const { status } = await fn();
        return { what, status, ms: Date.now() - started };
      };
      return [
        await timed('get', () => client(ingress.url, b.key).get(`/api/v1/links/${bLink.id}`)),
        await timed('create', () => client(ingress.url, b.key).post('/api/v1/links', { destination: `https://example.com/b/${unique()}` })),
        await timed('list', () => client(ingress.url, b.key).get('/api/v1/links?limit=5')),
        await timed('redirect', () => scan(ingress.url, bLink.shortId)),
      ];
    };
    const usual = Math.max(...[...(await bCalls()), ...(await bCalls())].map((c) => c.ms));

    // Each slow import sends a row every 500 ms for about 6 s.
    const slow = (key: string) => importStream(ingress.url, key, slowBody(`slow-${unique()}`, 12, { everyMs: 500 }));
    let importing = true;
    const imports = Promise.all([...Array.from({ length: 10 }, () => slow(a.key)), ...others.map((o) => slow(o.key))]).finally(() => (importing = false));
    const during: Awaited<ReturnType<typeof bCalls>> = [];
    await sleep(500);
    while (importing) during.push(...(await bCalls()));
    const results = await imports;

    expect(during.length).toBeGreaterThanOrEqual(8);
    expect(during.filter((c) => c.status >= 400)).toEqual([]);
    // "Usual": no call slower than the slowest before the imports, plus a second for a busy machine.
    expect(during.filter((c) => c.ms > usual + 1000)).toEqual([]);
    const fromA = results.slice(0, 10);
    expect(fromA.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    expect(fromA.filter((r) => r.status === 409).every((r) => r.body.error.code === 'import_running')).toBe(true);
    expect(results.slice(10).map((r) => [r.status, r.body.created])).toEqual([[200, 12], [200, 12], [200, 12]]);
    // Once answered, the workspace imports again.
    expect((await importStream(ingress.url, a.key, 'destination\nhttps://example.com/again\n')).status).toBe(200);
  });

  it('an import whose ingress stopped mid-way holds its workspace until it expires, then its staged rows go and a new import runs', async () => {
    const [a, b] = [await workspaceWithKey(ingress.url), await workspaceWithKey(ingress.url)];
    const { pg } = ingress.platform;
    // What a stopped ingress leaves: its claim on the workspace and the rows it had staged.
    const left = async (workspaceId: string, expiresInMs: number) => {
      const { rows } = await pg.query<{ id: string }>("INSERT INTO link_imports (workspace_id, expires_at) VALUES ($1, now() + $2 * interval '1 millisecond') RETURNING id", [workspaceId, expiresInMs]);
      await pg.query('INSERT INTO link_import_rows (import_id, line, link) VALUES ($1, 2, $2)', [rows[0]!.id, JSON.stringify({ input: { destination: 'https://example.com/left' }, passwordHash: null })]);
      return rows[0]!.id;
    };
    const aLeft = await left(a.workspaceId, 60_000);
    const bLeft = await left(b.workspaceId, -1000);
    const refused = await importStream(ingress.url, a.key, 'destination\nhttps://example.com/a\n');
    expect([refused.status, refused.body.error.code]).toEqual([409, 'import_running']);
    // B's expired: its import runs, and only its own row is created.
    const ran = await importStream(ingress.url, b.key, 'destination\nhttps://example.com/b\n');
    expect([ran.status, ran.body]).toEqual([200, { created: 1, skipped: 0, rejected: 0, errors: [] }]);
    expect((await client(ingress.url, b.key).get('/api/v1/links')).body.data.map((l: { destination: string }) => l.destination)).toEqual(['https://example.com/b']);
    expect((await pg.query('SELECT 1 FROM link_import_rows WHERE import_id = $1', [bLeft])).rowCount).toBe(0);
    // A's, once expired, goes too: at the next import of any workspace.
    await pg.query("UPDATE link_imports SET expires_at = now() - interval '1 second' WHERE id = $1", [aLeft]);
    expect((await importStream(ingress.url, b.key, 'destination\nhttps://example.com/b2\n')).status).toBe(200);
    expect((await pg.query('SELECT 1 FROM link_imports WHERE id = $1', [aLeft])).rowCount).toBe(0);
    expect((await importStream(ingress.url, a.key, 'destination\nhttps://example.com/a\n')).body.created).toBe(1);
  });
});

