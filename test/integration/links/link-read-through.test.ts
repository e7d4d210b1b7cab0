// A link redirects from the moment its creation is answered, on every ingress:
// the ingress that wrote it has it in its cache before it answers, and another
// ingress whose cache has not yet read links.changelog reads it through from
// Postgres. Misses are remembered (a bounded, short-lived negative cache) and
// concurrent misses of one short ID share one query, so random short IDs cannot
// flood the database; a cache hit never touches it.
//
// `two` stands for an ingress whose cache lags behind links.changelog: it
// follows a changelog of its own (a topic prefix under this file's), so it never
// hears of `one`'s links except through the read-through.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toLinkState } from '../../../src/links/changelog/link-state.ts';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { scan } from '../../support/links/scans.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually, testConfig } from '../../support/env.ts';

// Each window is far from how long the requests take, however loaded the machine: `two` remembers a
// miss longer than the test runs, `one` forgets it before the test's pause ends.
const TWO_MISS_MS = 600_000;
const ONE_MISS_MS = 200;
let one: TestIngress;
let two: TestIngress;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  const env = { API_RATE_LIMIT_PER_MINUTE: '100000', REDIRECT_MISS_CACHE_SIZE: '5' };
  const lagging = { ...env, REDIRECT_MISS_CACHE_MS: String(TWO_MISS_MS), TOPIC_PREFIX: `${testConfig().TOPIC_PREFIX}.lagging` };
  [one, two] = await Promise.all([startIngress({ ...env, REDIRECT_MISS_CACHE_MS: String(ONE_MISS_MS) }), startIngress(lagging)]);
  api = client(one.url, (await workspaceWithKey(one.url)).key);
});
afterAll(async () => {
  await Promise.all([one?.close(), two?.close()]);
});

const unknownId = () => `nx${randomBytes(6).toString('hex')}`;

describe('a link just written', () => {
  it('redirects at once on another ingress (50 times, no 404)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 50; i++) {
      const { body: link } = await api.post('/api/v1/links', { destination: `https://example.com/fresh/${i}` });
      statuses.push((await scan(two.url, link.shortId)).status);
    }
    expect(statuses.filter((s) => s !== 302)).toEqual([]);
  });

  it('redirects with its new state at once on the ingress that changed it', async () => {
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/v0' });
    for (let i = 1; i <= 20; i++) {
      expect((await api.patch(`/api/v1/links/${link.id}`, { destination: `https://example.com/v${i}` })).status).toBe(200);
      expect((await scan(one.url, link.shortId)).location).toMatch(new RegExp(`^https://example\\.com/v${i}\\?svc_cid=`));
    }
    expect((await api.delete(`/api/v1/links/${link.id}`)).status).toBe(200);
    expect((await scan(one.url, link.shortId)).status).toBe(410);
  });
});

describe('the read-through', () => {
  it('asks Postgres once for concurrent misses of one short ID, then remembers the miss for a while', async () => {
    const reads = two.app.redirects.readThrough;
    const id = unknownId();
    const before = reads.queries;
    const burst = await Promise.all(Array.from({ length: 20 }, () => scan(two.url, id)));
    expect(burst.every((r) => r.status === 404)).toBe(true);
    expect(reads.queries - before).toBe(1);
    for (let i = 0; i < 5; i++) expect((await scan(two.url, id)).status).toBe(404);
    expect(reads.queries - before).toBe(1);
  });

  it('asks again once the miss is older than REDIRECT_MISS_CACHE_MS', async () => {
    const reads = one.app.redirects.readThrough;
    const id = unknownId();
    const before = reads.queries;
    expect((await scan(one.url, id)).status).toBe(404);
    await new Promise((r) => setTimeout(r, ONE_MISS_MS + 100));
    expect((await scan(one.url, id)).status).toBe(404);
    expect(reads.queries - before).toBe(2);
  });

  it('remembers at most REDIRECT_MISS_CACHE_SIZE misses', async () => {
    for (let i = 0; i < 30; i++) expect((await scan(two.url, unknownId())).status).toBe(404);
    expect(two.app.redirects.readThrough.remembered).toBeLessThanOrEqual(5);
  });

  it('never asks Postgres on a cache hit', async () => {
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/hit' });
    expect((await scan(two.url, link.shortId)).status).toBe(302); // read through once
    const before = two.app.redirects.readThrough.queries;
    for (let i = 0; i < 10; i++) expect((await scan(two.url, link.shortId)).status).toBe(302);
    expect(two.app.redirects.readThrough.queries).toBe(before);
  });

  it('never replaces a cached link with an older version', async () => {
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/new' });
    await api.patch(`/api/v1/links/${link.id}`, { destination: 'https://example.com/newer' });
    const row = (await one.platform.pg.query('SELECT * FROM links WHERE id = $1', [link.id])).rows[0];
    expect((await scan(two.url, link.shortId)).status).toBe(302);
    // Two holds the newest version: read through at that scan, or from links.changelog, whose message
    // of version 1 may have reached two first (then version 2's follows it).
    await eventually(async () => two.app.redirects.cache.get(link.shortId)?.version === Number(row.version), 30_000, 50);
    two.app.redirects.cache.apply({ ...toLinkState(row), version: Number(row.version) - 1, destination: 'https://example.com/old' });
    expect(two.app.redirects.cache.get(link.shortId)?.destination).toBe('https://example.com/newer');
    expect((await scan(two.url, link.shortId)).location).toMatch(/^https:\/\/example\.com\/newer\?/);
  });
});
