// Contacts, topics with subscriptions, and segments through the real ingress.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { mailKey, organizationWithKey } from '../../support/mail/organizations.ts';

let ingress: TestIngress;
let url: string;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
  url = ingress.url;
});
afterAll(async () => ingress?.close());

describe('contacts', () => {
  it('create, get by id or email, list with filters and cursors, change, delete', async () => {
    const { key } = await organizationWithKey(url);
    const created = await call(url, 'POST', '/api/v1/contacts', { key, body: { email: 'Ada@Example.com', first_name: 'Ada', properties: { plan: 'pro', seats: 3, beta: true, note: null } } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'contact', email: 'ada@example.com', first_name: 'Ada', last_name: null, status: 'subscribed', properties: { plan: 'pro', seats: 3, beta: true, note: null } });
    expect((await call(url, 'POST', '/api/v1/contacts', { key, body: { email: 'ADA@example.com' } })).body.name).toBe('contact_exists');
    expect((await call(url, 'GET', '/api/v1/contacts/ada@EXAMPLE.com', { key })).body.id).toBe(created.body.id);
    for (let i = 0; i < 3; i++) await call(url, 'POST', '/api/v1/contacts', { key, body: { email: `c${i}@example.com`, status: i === 0 ? 'unsubscribed' : 'subscribed' } });
    const first = await call(url, 'GET', '/api/v1/contacts?limit=2', { key });
    expect(first.body).toMatchObject({ has_more: true });
    const rest = await call(url, 'GET', `/api/v1/contacts?limit=2&cursor=${first.body.next_cursor}`, { key });
    expect([...first.body.data, ...rest.body.data].map((c: { email: string }) => c.email)).toEqual(['c2@example.com', 'c1@example.com', 'c0@example.com', 'ada@example.com']);
    expect((await call(url, 'GET', '/api/v1/contacts?status=unsubscribed', { key })).body.data.map((c: { email: string }) => c.email)).toEqual(['c0@example.com']);
    expect((await call(url, 'GET', '/api/v1/contacts?email=C1@example.com', { key })).body.data).toHaveLength(1);

    const changed = await call(url, 'PATCH', `/api/v1/contacts/${created.body.id}`, { key, body: { last_name: 'Lovelace', properties: { plan: 'free' }, status: 'unsubscribed' } });
    expect(changed.body).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', properties: { plan: 'free' }, status: 'unsubscribed' });
    expect((await call(url, 'PATCH', `/api/v1/contacts/${created.body.id}`, { key, body: { email: 'c1@example.com' } })).body.name).toBe('contact_exists');
    expect((await call(url, 'DELETE', '/api/v1/contacts/ada@example.com', { key })).status).toBe(200);
    expect((await call(url, 'GET', `/api/v1/contacts/${created.body.id}`, { key })).status).toBe(404);
  });

  it('refuses bad contacts, stores nothing, and keeps organizations apart', async () => {
    const { organizationId, key } = await organizationWithKey(url);
    const cases: [unknown, string][] = [
      [{ email: 'nope' }, 'invalid_email'],
      [{ email: 'a@example.com', status: 'maybe' }, 'validation_failed'],
      [{ email: 'a@example.com', properties: { 'bad name': 1 } }, 'invalid_properties'],
      [{ email: 'a@example.com', properties: { nested: { a: 1 } } }, 'validation_failed'],
      [{ email: 'a@example.com', properties: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, 1])) }, 'invalid_properties'],
      [{ email: 'a@example.com', phone: '123' }, 'unknown_field'],
    ];
    for (const [body, code] of cases) expect((await call(url, 'POST', '/api/v1/contacts', { key, body })).body.name, JSON.stringify(body).slice(0, 80)).toBe(code);
    expect((await call(url, 'GET', '/api/v1/contacts', { key })).body.data).toEqual([]);
    const mine = await call(url, 'POST', '/api/v1/contacts', { key, body: { email: 'mine@example.com' } });
    const stranger = await organizationWithKey(url);
    expect((await call(url, 'GET', `/api/v1/contacts/${mine.body.id}`, { key: stranger.key })).status).toBe(404);
    expect((await call(url, 'GET', '/api/v1/contacts/mine@example.com', { key: stranger.key })).status).toBe(404);
    expect((await call(url, 'DELETE', `/api/v1/contacts/${mine.body.id}`, { key: stranger.key })).status).toBe(404);
    const send = await mailKey(url, organizationId, { kind: 'send' });
    expect((await call(url, 'GET', '/api/v1/contacts', { key: send.key })).body.name).toBe('insufficient_permissions');
  });
});

describe('topics and subscriptions', () => {
  it('effective state: the explicit choice, else the topic default; PUT and DELETE a choice', async () => {
    const { key } = await organizationWithKey(url);
    const news = await call(url, 'POST', '/api/v1/topics', { key, body: { slug: 'news', name: 'News', default_subscription: 'opt_in' } });
    expect(news.body).toMatchObject({ object: 'topic', slug: 'news', default_subscription: 'opt_in' });
    await call(url, 'POST', '/api/v1/topics', { key, body: { slug: 'offers', name: 'Offers', default_subscription: 'opt_out' } });
    expect((await call(url, 'POST', '/api/v1/topics', { key, body: { slug: 'news', name: 'Again', default_subscription: 'opt_in' } })).body.name).toBe('topic_exists');
    expect((await call(url, 'POST', '/api/v1/topics', { key, body: { slug: 'Bad Slug', name: 'x', default_subscription: 'opt_in' } })).status).toBe(400);
    const contact = await call(url, 'POST', '/api/v1/contacts', { key, body: { email: 'sub@example.com' } });
    const state = async () => Object.fromEntries((await call(url, 'GET', `/api/v1/contacts/${contact.body.id}/topics`, { key })).body.data.map((s: { topic: { slug: string }; subscribed: boolean; explicit: boolean }) => [s.topic.slug, [s.subscribed, s.explicit]]));
    expect(await state()).toEqual({ news: [true, false], offers: [false, false] });
    await call(url, 'PUT', '/api/v1/contacts/sub@example.com/topics/news', { key, body: { subscribed: false } });
    await call(url, 'PUT', `/api/v1/contacts/${contact.body.id}/topics/offers`, { key, body: { subscribed: true } });
    expect(await state()).toEqual({ news: [false, true], offers: [true, true] });
    await call(url, 'DELETE', `/api/v1/contacts/${contact.body.id}/topics/${news.body.id}`, { key });
    expect(await state()).toEqual({ news: [true, false], offers: [true, true] });
    expect((await call(url, 'PUT', `/api/v1/contacts/${contact.body.id}/topics/missing`, { key, body: { subscribed: true } })).status).toBe(404);
    expect((await call(url, 'PUT', `/api/v1/contacts/${contact.body.id}/topics/news`, { key, body: { subscribed: 'yes' } })).status).toBe(400);
    expect((await call(url, 'PATCH', '/api/v1/topics/offers', { key, body: { default_subscription: 'opt_in', name: 'Deals' } })).body).toMatchObject({ name: 'Deals', default_subscription: 'opt_in' });
    const other = await organizationWithKey(url);
    expect((await call(url, 'GET', `/api/v1/topics/${news.body.id}`, { key: other.key })).status).toBe(404);
    expect((await call(url, 'DELETE', '/api/v1/topics/news', { key })).status).toBe(200);
    expect(Object.keys(await state())).toEqual(['offers']);
  });
});

describe('segments', () => {
  it('stores a valid filter and lists the contacts it matches', async () => {
    const { key } = await organizationWithKey(url);
    const people = [
      { email: 'a@example.com', first_name: 'Ann', properties: { plan: 'pro', seats: 10 } },
      { email: 'b@example.com', first_name: 'Bob', properties: { plan: 'free', seats: 1 } },
      { email: 'c@example.org', first_name: 'Cid', properties: { plan: 'pro', seats: '12' } },
      { email: 'd@example.com', properties: {} },
    ];
    for (const body of people) await call(url, 'POST', '/api/v1/contacts', { key, body });
    const segment = await call(url, 'POST', '/api/v1/segments', { key, body: { name: 'Pro at .com', filter: { all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }, { field: 'email', op: 'contains', value: '.COM' }] } } });
    expect(segment.status).toBe(201);
    const members = async (id: string) => (await call(url, 'GET', `/api/v1/segments/${id}/contacts`, { key })).body.data.map((c: { email: string }) => c.email).sort();
    expect(await members(segment.body.id)).toEqual(['a@example.com']);
    const big = await call(url, 'POST', '/api/v1/segments', { key, body: { name: 'Big', filter: { any: [{ field: 'properties.seats', op: 'gte', value: 5 }, { not: { field: 'first_name', op: 'exists', value: true } }] } } });
    // c's seats is the string "12": a numeric comparison never matches a string.
    expect(await members(big.body.id)).toEqual(['a@example.com', 'd@example.com']);
    const changed = await call(url, 'PATCH', `/api/v1/segments/${big.body.id}`, { key, body: { filter: { field: 'properties.plan', op: 'in', value: ['free', 'pro'] } } });
    expect(changed.status).toBe(200);
    expect(await members(big.body.id)).toEqual(['a@example.com', 'b@example.com', 'c@example.org']);
    expect((await call(url, 'GET', '/api/v1/segments', { key })).body.data).toHaveLength(2);
  });

  it('refuses bad filters naming the place, and keeps organizations apart', async () => {
    const { key } = await organizationWithKey(url);
    const bad = await call(url, 'POST', '/api/v1/segments', { key, body: { name: 'x', filter: { all: [{ field: 'email', op: 'eq', value: 'a@b.c' }, { field: 'shoe_size', op: 'eq', value: 1 }] } } });
    expect([bad.status, bad.body.name]).toEqual([400, 'invalid_filter']);
    expect(bad.body.error.details[0].path).toBe('/filter/all/1/field');
    expect((await call(url, 'POST', '/api/v1/segments', { key, body: { name: 'x' } })).status).toBe(400);
    expect((await call(url, 'GET', '/api/v1/segments', { key })).body.data).toEqual([]);
    const ok = await call(url, 'POST', '/api/v1/segments', { key, body: { name: 'all', filter: { field: 'status', op: 'eq', value: 'subscribed' } } });
    const other = await organizationWithKey(url);
    expect((await call(url, 'GET', `/api/v1/segments/${ok.body.id}/contacts`, { key: other.key })).status).toBe(404);
  });
});
