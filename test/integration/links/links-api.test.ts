// The links API over real HTTP against the real stack: every endpoint's happy
// path, its bounds, and bad input that changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

let ingress: TestIngress;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  const { key } = await workspaceWithKey(ingress.url);
  api = client(ingress.url, key);
});
afterAll(async () => {
  await ingress?.close();
});

const count = async () => {
  let n = 0;
  let cursor: string | null = null;
  do {
    const page: any = await api.get(`/api/v1/links?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    n += page.body.data.length;
    cursor = page.body.nextCursor;
  } while (cursor);
  return n;
};

describe('links: create, read, update, soft delete', () => {
  it('creates a link with every field and reads it back', async () => {
    const res = await api.post('/api/v1/links', {
      destination: 'https://example.com/menu?table=4#top',
      shortId: `menu-${Date.now()}`,
      iosUrl: 'https://apps.apple.com/app/id1',
      androidUrl: 'https://play.google.com/store/apps/details?id=x',
      tags: ['Print', 'print', ' Spring '],
      pixels: [{ provider: 'meta', pixelId: '1234567890' }],
      expiresAt: '2099-01-01T00:00:00.000Z',
      scanLimit: 500,
    });
    expect(res.status).toBe(201);
    const link = res.body;
    expect(link).toMatchObject({
      destination: 'https://example.com/menu?table=4#top',
      iosUrl: 'https://apps.apple.com/app/id1',
      androidUrl: 'https://play.google.com/store/apps/details?id=x',
      tags: ['print', 'spring'],
      pixels: [{ provider: 'meta', pixelId: '1234567890' }],
      expiresAt: '2099-01-01T00:00:00.000Z',
      scanLimit: 500,
      isActive: true,
      campaignId: null,
      exhaustedAt: null,
    });
    expect(link.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(link.shortUrl.endsWith(`/${link.shortId}`)).toBe(true);
    const got = await api.get(`/api/v1/links/${link.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(link);
  });

  it('assigns a 7-character short ID when none is given', async () => {
    const res = await api.post('/api/v1/links', { destination: 'https://example.com/' });
    expect(res.status).toBe(201);
    expect(res.body.shortId).toMatch(/^[0-9A-Za-z]{7}$/);
  });

  it('updates each changeable field with PATCH, and null clears optional ones', async () => {
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/a', expiresAt: '2099-01-01T00:00:00Z', scanLimit: 5 });
    const res = await api.patch(`/api/v1/links/${link.id}`, {
      destination: 'https://example.com/b',
      tags: ['x'],
      pixels: [{ provider: 'google', pixelId: 'AW-1' }],
      expiresAt: null,
      scanLimit: null,
      isActive: false,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ destination: 'https://example.com/b', tags: ['x'], pixels: [{ provider: 'google', pixelId: 'AW-1' }], expiresAt: null, scanLimit: null, isActive: false });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(link.updatedAt));
    const again = await api.patch(`/api/v1/links/${link.id}`, { isActive: true, scanLimit: 10 });
    expect(again.body).toMatchObject({ isActive: true, scanLimit: 10, destination: 'https://example.com/b' });
  });

  it('soft-deletes: isActive false, the record kept and readable', async () => {
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/d' });
    const del = await api.delete(`/api/v1/links/${link.id}`);
    expect(del.status).toBe(200);
    expect(del.body.isActive).toBe(false);
    const got = await api.get(`/api/v1/links/${link.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: link.id, isActive: false, destination: 'https://example.com/d' });
  });

  it('answers 404 for unknown and malformed ids', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      expect((await api.get(`/api/v1/links/${id}`)).status).toBe(404);
      expect((await api.patch(`/api/v1/links/${id}`, { isActive: false })).status).toBe(404);
      const del = await api.delete(`/api/v1/links/${id}`);
      expect(del.status).toBe(404);
      expect(del.body.error.code).toBe('not_found');
    }
  });
});

describe('links: bad input is refused with a stable code and changes nothing', () => {
  const cases: [string, unknown, number, string][] = [
    ['missing destination', {}, 400, 'validation_failed'],
    ['ftp URL', { destination: 'ftp://example.com/file' }, 400, 'invalid_url'],
    ['javascript URL', { destination: 'javascript:alert(1)' }, 400, 'invalid_url'],
    ['relative URL', { destination: '/just/a/path' }, 400, 'invalid_url'],
    ['URL with credentials', { destination: 'https://user:pass@example.com/' }, 400, 'invalid_url'],
    ['oversize URL', { destination: `https://example.com/${'a'.repeat(2100)}` }, 400, 'validation_failed'],
    ['bad iOS URL', { destination: 'https://example.com', iosUrl: 'itms://x' }, 400, 'invalid_url'],
    ['wrong type', { destination: 42 }, 400, 'validation_failed'],
    ['string scan limit', { destination: 'https://example.com', scanLimit: '5' }, 400, 'validation_failed'],
    ['zero scan limit', { destination: 'https://example.com', scanLimit: 0 }, 400, 'validation_failed'],
    ['unknown field', { destination: 'https://example.com', color: 'red' }, 400, 'unknown_field'],
    ['short ID with spaces', { destination: 'https://example.com', shortId: 'has space' }, 400, 'validation_failed'],
    ['short ID too short', { destination: 'https://example.com', shortId: 'ab' }, 400, 'validation_failed'],
    ['short ID too long', { destination: 'https://example.com', shortId: 'a'.repeat(65) }, 400, 'validation_failed'],
    ['reserved short ID', { destination: 'https://example.com', shortId: 'api' }, 400, 'short_id_reserved'],
    ['expiry in the past', { destination: 'https://example.com', expiresAt: '2001-01-01T00:00:00Z' }, 400, 'expiry_in_past'],
    ['expiry not a date', { destination: 'https://example.com', expiresAt: 'tomorrow' }, 400, 'validation_failed'],
    ['21 tags', { destination: 'https://example.com', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 400, 'validation_failed'],
    ['51-character tag', { destination: 'https://example.com', tags: ['x'.repeat(51)] }, 400, 'validation_failed'],
    ['unknown pixel provider', { destination: 'https://example.com', pixels: [{ provider: 'myspace', pixelId: '1' }] }, 400, 'validation_failed'],
    ['unknown campaign', { destination: 'https://example.com', campaignId: '00000000-0000-4000-8000-000000000000' }, 400, 'campaign_not_found'],
  ];

  it.each(cases)('create: %s', async (_name, body, status, code) => {
    const before = await count();
    const res = await api.post('/api/v1/links', body);
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(typeof res.body.error.message).toBe('string');
    expect(res.body.error.requestId).toBeTruthy();
    expect(await count()).toBe(before);
  });

  it('names one rule for a nullable field, its own, not the union\'s "must be null" (docs/links-api.md, Errors)', async () => {
    const res = await api.post('/api/v1/links', { destination: 'https://example.com', scanLimit: 0 });
    expect(res.body.error).toMatchObject({ code: 'validation_failed', message: 'Invalid body: /scanLimit must be >= 1', details: [{ path: '/scanLimit', message: 'must be >= 1' }] });
    const nested = await api.post('/api/v1/links', { destination: 'https://example.com', expiresAt: 5, testVariants: [{ url: 'https://example.com/a', percent: 5 }, { url: 'https://example.com/b', percent: 95 }] });
    expect(nested.body.error.details).toEqual([
      { path: '/expiresAt', message: 'must be string' },
      { path: '/testVariants/0/percent', message: 'must be >= 10' },
      { path: '/testVariants/1/percent', message: 'must be <= 90' },
    ]);
  });

  it('refuses a duplicate custom short ID with 409 and keeps the first link', async () => {
    const shortId = `dup-${Date.now()}`;
    const first = await api.post('/api/v1/links', { destination: 'https://example.com/first', shortId });
    expect(first.status).toBe(201);
    const before = await count();
    const second = await api.post('/api/v1/links', { destination: 'https://example.com/second', shortId });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('short_id_taken');
    expect(await count()).toBe(before);
    expect((await api.get(`/api/v1/links/${first.body.id}`)).body.destination).toBe('https://example.com/first');
  });

  it('refuses malformed JSON, bad PATCH bodies, and changes nothing', async () => {
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/keep' });
    const malformed = await api.raw('POST', '/api/v1/links', '{"destination": ');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('invalid_json');
    const patches: [unknown, string][] = [
      [{}, 'validation_failed'],
      [{ destination: 'mailto:a@b.c' }, 'invalid_url'],
      [{ shortId: 'new-one' }, 'unknown_field'],
      [{ isActive: 'yes' }, 'validation_failed'],
      [{ scanLimit: -1 }, 'validation_failed'],
      [{ expiresAt: '1999-01-01T00:00:00Z' }, 'expiry_in_past'],
    ];
    for (const [body, code] of patches) {
      const res = await api.patch(`/api/v1/links/${link.id}`, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(code);
    }
    const badJsonPatch = await api.raw('PATCH', `/api/v1/links/${link.id}`, '{nope');
    expect(badJsonPatch.body.error.code).toBe('invalid_json');
    const after = await api.get(`/api/v1/links/${link.id}`);
    expect(after.body).toEqual(link);
  });
});

describe('links: list, search, filter, sort, paginate', () => {
  let tag: string;
  beforeAll(async () => {
    tag = `batch${Date.now()}`;
    const ops = Array.from({ length: 100 }, (_, i) => ({ action: 'create', link: { destination: `https://list.example.com/item/${i}`, tags: [tag, i % 2 ? 'odd' : 'even'] } }));
    const created = await api.post('/api/v1/links/bulk', { operations: ops });
    expect(created.body.succeeded).toBe(100);
    const more = await api.post('/api/v1/links/bulk', { operations: ops.slice(0, 5).map((o, i) => ({ ...o, link: { ...o.link, destination: `https://list.example.com/extra/${i}` } })) });
    expect(more.body.succeeded).toBe(5);
  });

  it('pages through 105 links, up to 100 per page, newest first, without gaps or repeats', async () => {
    const first = await api.get(`/api/v1/links?tag=${tag}&limit=100`);
    expect(first.status).toBe(200);
    expect(first.body.object).toBe('list');
    expect(first.body.data).toHaveLength(100);
    expect(first.body.nextCursor).toBeTruthy();
    const second = await api.get(`/api/v1/links?tag=${tag}&limit=100&cursor=${first.body.nextCursor}`);
    expect(second.body.data).toHaveLength(5);
    expect(second.body.nextCursor).toBeNull();
    const all = [...first.body.data, ...second.body.data];
    expect(new Set(all.map((l: any) => l.id)).size).toBe(105);
    const times = all.map((l: any) => Date.parse(l.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // The 5 created last come first.
    expect(first.body.data.slice(0, 5).every((l: any) => l.destination.includes('/extra/'))).toBe(true);
  });

  it('refuses a page size over 100 and a foreign cursor', async () => {
    const big = await api.get('/api/v1/links?limit=101');
    expect(big.status).toBe(400);
    expect(big.body.error.code).toBe('validation_failed');
    const first = await api.get(`/api/v1/links?tag=${tag}&limit=10`);
    const wrongSort = await api.get(`/api/v1/links?tag=${tag}&limit=10&sort=shortId&cursor=${first.body.nextCursor}`);
    expect(wrongSort.status).toBe(400);
    expect(wrongSort.body.error.code).toBe('invalid_cursor');
    const garbage = await api.get('/api/v1/links?cursor=%7B%7D');
    expect(garbage.body.error.code).toBe('invalid_cursor');
    const unknownParam = await api.get('/api/v1/links?colour=red');
    expect(unknownParam.status).toBe(400);
  });

  it('filters by every given tag and searches short ID, destination and tags', async () => {
    const odd = await api.get(`/api/v1/links?tag=${tag}&tag=odd&limit=100`);
    expect(odd.body.data).toHaveLength(50 + 2);
    const search = await api.get('/api/v1/links?q=item/42&limit=100');
    expect(search.body.data.map((l: any) => l.destination)).toEqual(['https://list.example.com/item/42']);
    const byTag = await api.get(`/api/v1/links?q=${tag.toUpperCase()}&limit=100`);
    expect(byTag.body.data.length).toBe(100);
    const { body: custom } = await api.post('/api/v1/links', { destination: 'https://example.com', shortId: `Find-Me-${Date.now()}` });
    const byShortId = await api.get(`/api/v1/links?q=find-me-`);
    expect(byShortId.body.data.map((l: any) => l.id)).toContain(custom.id);
    // LIKE wildcards in the search are taken literally.
    const wildcard = await api.get('/api/v1/links?q=%25%25%25');
    expect(wildcard.body.data).toHaveLength(0);
  });

  it('sorts by shortId ascending and by updatedAt, paginating stably', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await api.get(`/api/v1/links?tag=${tag}&sort=shortId&limit=40${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.body.data.map((l: any) => l.shortId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(105);
    expect(seen).toEqual([...seen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const someId = (await api.get(`/api/v1/links?tag=${tag}&limit=1&sort=createdAt&order=asc`)).body.data[0].id;
    await api.patch(`/api/v1/links/${someId}`, { tags: [tag, 'touched'] });
    const updated = await api.get(`/api/v1/links?tag=${tag}&sort=updatedAt&limit=1`);
    expect(updated.body.data[0].id).toBe(someId);
  });

  it('filters by active state', async () => {
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/inactive', tags: ['inactive-check'] });
    await api.delete(`/api/v1/links/${link.id}`);
    const inactive = await api.get('/api/v1/links?tag=inactive-check&isActive=false');
    expect(inactive.body.data.map((l: any) => l.id)).toEqual([link.id]);
    const active = await api.get('/api/v1/links?tag=inactive-check&isActive=true');
    expect(active.body.data).toHaveLength(0);
  });
});

describe('links: bulk', () => {
  it('creates, updates and soft-deletes in one call, reporting each operation', async () => {
    const { body: a } = await api.post('/api/v1/links', { destination: 'https://example.com/bulk-a' });
    const { body: b } = await api.post('/api/v1/links', { destination: 'https://example.com/bulk-b' });
    const res = await api.post('/api/v1/links/bulk', {
      operations: [
        { action: 'create', link: { destination: 'https://example.com/bulk-new', tags: ['bulk'] } },
        { action: 'update', id: a.id, changes: { destination: 'https://example.com/bulk-a2' } },
        { action: 'delete', id: b.id },
        { action: 'create', link: { destination: 'ftp://bad' } },
        { action: 'update', id: '00000000-0000-4000-8000-000000000000', changes: { isActive: false } },
        { action: 'explode', id: a.id },
        { action: 'create', link: { destination: 'https://example.com', bogus: 1 } },
        'not an object',
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.succeeded).toBe(3);
    expect(res.body.failed).toBe(5);
    const r = res.body.results;
    expect(r.map((x: any) => x.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(r[0]).toMatchObject({ action: 'create', status: 201, link: { destination: 'https://example.com/bulk-new' } });
    expect(r[1]).toMatchObject({ action: 'update', status: 200, link: { id: a.id, destination: 'https://example.com/bulk-a2' } });
    expect(r[2]).toMatchObject({ action: 'delete', status: 200, link: { id: b.id, isActive: false } });
    expect(r[3]).toMatchObject({ status: 400, error: { code: 'invalid_url' } });
    expect(r[4]).toMatchObject({ status: 404, error: { code: 'not_found' } });
    expect(r[5]).toMatchObject({ status: 400, error: { code: 'validation_failed' } });
    expect(r[6]).toMatchObject({ status: 400, error: { code: 'unknown_field' } });
    expect(r[7]).toMatchObject({ status: 400 });
    expect((await api.get(`/api/v1/links/${a.id}`)).body.destination).toBe('https://example.com/bulk-a2');
  });

  it('accepts 100 operations and refuses 101 as a whole, changing nothing', async () => {
    const tag = `cap${Date.now()}`;
    const op = (i: number) => ({ action: 'create', link: { destination: `https://example.com/cap/${i}`, tags: [tag] } });
    const over = await api.post('/api/v1/links/bulk', { operations: Array.from({ length: 101 }, (_, i) => op(i)) });
    expect(over.status).toBe(400);
    expect(over.body.error.code).toBe('validation_failed');
    expect((await api.get(`/api/v1/links?tag=${tag}`)).body.data).toHaveLength(0);
    const empty = await api.post('/api/v1/links/bulk', { operations: [] });
    expect(empty.status).toBe(400);
    const ok = await api.post('/api/v1/links/bulk', { operations: Array.from({ length: 100 }, (_, i) => op(i)) });
    expect(ok.status).toBe(200);
    expect(ok.body.succeeded).toBe(100);
  });
});

describe('campaigns', () => {
  it('creates campaigns, assigns links, and lists them with link counts', async () => {
    const name = `Spring ${Date.now()}`;
    const created = await api.post('/api/v1/campaigns', { name, description: 'Menus' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name, description: 'Menus', linkCount: 0, activeLinkCount: 0 });
    const id = created.body.id;
    const { body: l1 } = await api.post('/api/v1/links', { destination: 'https://example.com/c1', campaignId: id });
    const { body: l2 } = await api.post('/api/v1/links', { destination: 'https://example.com/c2' });
    expect(l1.campaignId).toBe(id);
    const assigned = await api.patch(`/api/v1/links/${l2.id}`, { campaignId: id });
    expect(assigned.body.campaignId).toBe(id);
    await api.delete(`/api/v1/links/${l2.id}`);
    const got = await api.get(`/api/v1/campaigns/${id}`);
    expect(got.body).toMatchObject({ linkCount: 2, activeLinkCount: 1 });
    const list = await api.get('/api/v1/campaigns');
    expect(list.body.object).toBe('list');
    expect(list.body.data[0]).toMatchObject({ id, linkCount: 2 });
    const inCampaign = await api.get(`/api/v1/links?campaignId=${id}`);
    expect(inCampaign.body.data.map((l: any) => l.id).sort()).toEqual([l1.id, l2.id].sort());
    const unassigned = await api.patch(`/api/v1/links/${l1.id}`, { campaignId: null });
    expect(unassigned.body.campaignId).toBeNull();
  });

  it('renames, refuses duplicate names and bad input', async () => {
    const a = await api.post('/api/v1/campaigns', { name: `A ${Date.now()}` });
    const dup = await api.post('/api/v1/campaigns', { name: a.body.name.toUpperCase() });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('campaign_name_taken');
    const renamed = await api.patch(`/api/v1/campaigns/${a.body.id}`, { name: `${a.body.name} renamed` });
    expect(renamed.body.name).toBe(`${a.body.name} renamed`);
    expect((await api.post('/api/v1/campaigns', { name: '' })).status).toBe(400);
    expect((await api.post('/api/v1/campaigns', { name: 'x'.repeat(121) })).status).toBe(400);
    expect((await api.post('/api/v1/campaigns', { name: 'ok', owner: 'me' })).body.error.code).toBe('unknown_field');
    expect((await api.get('/api/v1/campaigns/not-a-uuid')).status).toBe(404);
    expect((await api.get('/api/v1/campaigns?limit=101')).status).toBe(400);
  });
});
