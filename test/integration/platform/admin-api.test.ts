// The operator API (/admin/v1) over real HTTP: its lists page as the public API's lists do
// (the link product's camelCase `nextCursor`, the mail product's `has_more`/`next_cursor`), and
// every operator route refuses query parameters it does not declare with 400 unknown_field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

let ingress: TestIngress;
const admin = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
const get = (path: string) => call(ingress.url, 'GET', path, admin);

// Its own databases: the lists count every workspace and organization there is.
useOwnDatabases();

beforeAll(async () => {
  ingress = await startIngress();
}, 120_000);

afterAll(async () => ingress?.close());

/** Every page of a list, following `cursorOf` with `limit`. */
async function walk(path: string, limit: number, cursorOf: (body: any) => string | null): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let pages = 0;
  for (let cursor: string | null = null; ; ) {
    const res = await get(`${path}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    ids.push(...res.body.data.map((item: { id: string }) => item.id));
    pages++;
    cursor = cursorOf(res.body);
    if (cursor === null) return { ids, pages };
  }
}

describe('operator lists', () => {
  it('GET /admin/v1/workspaces and a workspace\'s keys page newest first with limit and cursor (nextCursor)', async () => {
    const made: string[] = [];
    for (let i = 0; i < 23; i++) made.push((await call(ingress.url, 'POST', '/admin/v1/workspaces', { ...admin, body: { name: `ws-${i}`, plan: 'enterprise' } })).body.id);
    const first = await get('/admin/v1/workspaces');
    expect(first.body.data.map((w: { id: string }) => w.id)).toEqual(made.slice(-20).reverse());
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const all = await walk('/admin/v1/workspaces', 7, (b) => b.nextCursor);
    expect(all).toEqual({ ids: [...made].reverse(), pages: 4 });

    const ws = made[0]!;
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) keys.push((await call(ingress.url, 'POST', `/admin/v1/workspaces/${ws}/keys`, { ...admin, body: { name: `k${i}` } })).body.apiKey.id);
    expect(await walk(`/admin/v1/workspaces/${ws}/keys`, 2, (b) => b.nextCursor)).toEqual({ ids: [...keys].reverse(), pages: 2 });

    for (const query of ['limit=0', 'limit=101', 'limit=x']) expect((await get(`/admin/v1/workspaces?${query}`)).body.error.code).toBe('validation_failed');
    expect((await get('/admin/v1/workspaces?cursor=bm9wZQ')).body.error.code).toBe('invalid_cursor');
  });

  it('GET /admin/v1/organizations and an organization\'s keys page as every mail list (has_more, next_cursor)', async () => {
    const made: string[] = [];
    for (let i = 0; i < 23; i++) made.push((await call(ingress.url, 'POST', '/admin/v1/organizations', { ...admin, body: { name: `org-${i}`, plan: 'pro' } })).body.id);
    const first = await get('/admin/v1/organizations');
    expect(first.body).toMatchObject({ object: 'list', has_more: true, next_cursor: expect.any(String) });
    expect(first.body.data.map((o: { id: string }) => o.id)).toEqual(made.slice(-20).reverse());
    expect(await walk('/admin/v1/organizations', 7, (b) => b.next_cursor)).toEqual({ ids: [...made].reverse(), pages: 4 });

    const org = made[0]!;
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) keys.push((await call(ingress.url, 'POST', `/admin/v1/organizations/${org}/keys`, { ...admin, body: { name: `k${i}`, kind: 'full' } })).body.api_key.id);
    expect(await walk(`/admin/v1/organizations/${org}/keys`, 2, (b) => b.next_cursor)).toEqual({ ids: [...keys].reverse(), pages: 2 });

    const refused = await get('/admin/v1/organizations?limit=101');
    expect([refused.status, refused.body.error.code]).toEqual([400, 'validation_failed']);
    expect((await get('/admin/v1/organizations?cursor=bm9wZQ')).body.error.code).toBe('invalid_cursor');
  });
});

describe('operator routes', () => {
  it('refuse query parameters they do not declare with 400 unknown_field naming it, as the public lists do, and change nothing', async () => {
    const ws = (await call(ingress.url, 'POST', '/admin/v1/workspaces', { ...admin, body: { name: 'q', plan: 'free' } })).body.id;
    const org = (await call(ingress.url, 'POST', '/admin/v1/organizations', { ...admin, body: { name: 'q', plan: 'free' } })).body.id;
    const cases: [string, string, unknown?][] = [
      ['GET', '/admin/v1/workspaces?foo=1'],
      ['GET', `/admin/v1/workspaces/${ws}/keys?foo=1`],
      ['PATCH', `/admin/v1/workspaces/${ws}?foo=1`, { plan: 'pro' }],
      ['GET', '/admin/v1/organizations?foo=1'],
      ['GET', `/admin/v1/organizations/${org}?foo=1`],
      ['PATCH', `/admin/v1/organizations/${org}?foo=1`, { plan: 'pro' }],
      ['POST', `/admin/v1/organizations/${org}/keys?foo=1`, { name: 'k', kind: 'full' }],
    ];
    for (const [method, path, body] of cases) {
      const res = await call(ingress.url, method, path, { ...admin, body });
      expect([res.status, res.body.error.code, res.body.error.details], `${method} ${path}`).toEqual([400, 'unknown_field', [{ path: '/foo', message: expect.any(String) }]]);
    }
    expect((await get(`/admin/v1/organizations/${org}`)).body.plan).toBe('free');
    expect((await get(`/admin/v1/organizations/${org}/keys`)).body.data).toEqual([]);
  });
});
