// The failed-authentication allowance (10 per minute per IP) counts failures
// only: a client sending many good requests at once is not refused by it while
// the IP is within it, concurrent bad guesses still cannot get more than 10
// answers past it, and once it is spent every request from the IP is refused,
// good keys too, as docs/links-api.md says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { organizationWithKey } from '../../support/mail/organizations.ts';

let ingress: TestIngress;
const badKey = () => `lk_live_${'x'.repeat(32)}`;

beforeAll(async () => {
  ingress = await startIngress();
});
afterAll(async () => {
  await ingress?.close();
});

describe('failed-authentication allowance under concurrency', () => {
  it('answers 50 concurrent requests with one valid key from one IP with 200', async () => {
    const ws = await workspaceWithKey(ingress.url);
    const ip = freshIp();
    const answers = await Promise.all(Array.from({ length: 50 }, () => call(ingress.url, 'GET', '/api/v1/links?limit=1', { key: ws.key, ip })));
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
    // The headers are the workspace's: 50 of its 100 used.
    expect(Math.min(...answers.map((a) => Number(a.headers.get('x-ratelimit-remaining'))))).toBe(50);
  });

  it('answers 20 concurrent operator requests with the right token from one IP with 200', async () => {
    const ip = freshIp();
    const answers = await Promise.all(Array.from({ length: 20 }, () => call(ingress.url, 'GET', '/admin/v1/workspaces?limit=1', { ip, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
  });

  it('still refuses the 11th failure after 10 bad keys, and then good keys of either product and the operator token from that IP too, saying when to retry', async () => {
    const ws = await workspaceWithKey(ingress.url);
    const org = await organizationWithKey(ingress.url);
    const ip = freshIp();
    for (let i = 0; i < 10; i++) {
      const res = await call(ingress.url, 'GET', '/api/v1/links', { key: badKey(), ip });
      expect(res.status).toBe(401);
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(9 - i));
    }
    const eleventh = await call(ingress.url, 'GET', '/api/v1/links', { key: badKey(), ip });
    expect(eleventh.status).toBe(429);
    expect(eleventh.body.error.code).toBe('auth_rate_limited');
    expect(eleventh.headers.get('x-ratelimit-remaining')).toBe('0');
    const good = [
      await call(ingress.url, 'GET', '/api/v1/links', { key: ws.key, ip }),
      await call(ingress.url, 'GET', '/api/v1/contacts', { key: org.key, ip }),
      await call(ingress.url, 'GET', '/admin/v1/workspaces?limit=1', { ip, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }),
    ];
    for (const res of good) {
      expect([res.status, res.body.error.code]).toEqual([429, 'auth_rate_limited']);
      // Until the oldest of the ten failures is a minute old.
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(50);
      expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    }
    // Another address is not affected.
    expect((await call(ingress.url, 'GET', '/api/v1/links', { key: ws.key })).status).toBe(200);
  });

  it('lets at most 10 of 40 concurrent bad guesses from one IP be answered as failures; the rest get 429', async () => {
    const ip = freshIp();
    const answers = await Promise.all(Array.from({ length: 40 }, () => call(ingress.url, 'GET', '/api/v1/links', { key: badKey(), ip })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect((await call(ingress.url, 'GET', '/api/v1/links', { key: badKey(), ip })).status).toBe(429);
  });

  it('does not let good requests in flight refund failures: 10 failures amid 30 good requests still close the IP', async () => {
    const ws = await workspaceWithKey(ingress.url);
    const ip = freshIp();
    const good = Array.from({ length: 30 }, () => call(ingress.url, 'GET', '/api/v1/links?limit=1', { key: ws.key, ip }));
    const bad = Array.from({ length: 10 }, () => call(ingress.url, 'GET', '/api/v1/links', { key: badKey(), ip }));
    const [goodAnswers, badAnswers] = await Promise.all([Promise.all(good), Promise.all(bad)]);
    expect(badAnswers.map((a) => a.status)).toEqual(Array(10).fill(401));
    // Good requests that raced the failures may pass or be refused, never fail otherwise.
    expect(goodAnswers.filter((a) => a.status !== 200 && a.status !== 429)).toEqual([]);
    expect((await call(ingress.url, 'GET', '/api/v1/links', { key: badKey(), ip })).status).toBe(429);
  });
});
