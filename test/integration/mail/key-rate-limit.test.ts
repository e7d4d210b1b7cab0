// The per-key request limit of the mail API (spec, Limits): one-second windows on
// Redis's clock, shared by every ingress and by REST and MCP calls, exact under concurrency. Bursts start
// just after a window turns (Redis TIME), so one burst falls in one window; a burst
// that straddled two anyway (its answers name two resets) is sent again.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type Response, type TestIngress } from '../../support/ingress.ts';
import { testConfig } from '../../support/env.ts';
import { mailKey, organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { loadServiceConfig } from '../../../src/service.ts';
import { defaultRequestsPerSecond } from '../../../src/mail/config.ts';
import { redisTls } from '../../../src/platform/redis.ts';

let a: TestIngress;
let b: TestIngress;
let redis: Redis;

beforeAll(async () => {
  // API_RATE_LIMIT_PER_SEC unset: the spec's 10 per second.
  [a, b] = await Promise.all([startIngress({ API_RATE_LIMIT_PER_SEC: '' }), startIngress({ API_RATE_LIMIT_PER_SEC: '' })]);
  redis = new Redis(testConfig().REDIS_URL, redisTls(testConfig()));
});
afterAll(async () => {
  redis?.disconnect();
  await Promise.all([a?.close(), b?.close()]);
});

/** Waits until Redis's clock is just past a second boundary. */
async function startOfSecond(): Promise<void> {
  for (;;) {
    const [, micros] = await redis.time();
    const ms = Number(micros) / 1000;
    if (ms < 50) return;
    await new Promise((r) => setTimeout(r, Math.max(1, 1000 - ms + 2)));
  }
}

/** Runs `burst` at the start of a window until its answers fall in one window. */
async function inOneWindow(burst: () => Promise<Response[]>): Promise<Response[]> {
  for (let attempt = 0; attempt < 5; attempt++) {
    await startOfSecond();
    const answers = await burst();
    // Whatever happens next starts in a later window.
    await new Promise((r) => setTimeout(r, 60));
    const resets = new Set(answers.map((r) => r.headers.get('x-ratelimit-reset')));
    if (resets.size === 1) return answers;
    await new Promise((r) => setTimeout(r, 1100));
  }
  throw new Error('no burst fell in one window in 5 attempts');
}

const statuses = (answers: Response[]) => answers.map((r) => r.status).sort();

describe('requests per key per second', () => {
  it('admits exactly 10 of 40 simultaneous requests across two ingresses, then 429 rate_limited with Retry-After: 1', async () => {
    const { key } = await organizationWithKey(a.url);
    const answers = await inOneWindow(() => Promise.all(Array.from({ length: 40 }, (_, i) => call((i % 2 ? a : b).url, 'GET', '/api/v1/domains', { key }))));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused).toHaveLength(30);
    for (const r of refused) {
      expect(r.body.name).toBe('rate_limited');
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.headers.get('x-ratelimit-limit')).toBe('10');
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    }
    // The next window admits the key again.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await call(a.url, 'GET', '/api/v1/domains', { key })).status).toBe(200);
  });

  it('a key\'s own cap wins over the platform default, and keys do not share a window', async () => {
    const { organizationId, key } = await organizationWithKey(a.url, { rate_limit: 3 });
    const other = await mailKey(a.url, organizationId, { rate_limit: 25 });
    const answers = await inOneWindow(() => Promise.all([
      ...Array.from({ length: 12 }, (_, i) => call((i % 2 ? a : b).url, 'GET', '/api/v1/domains', { key })),
      ...Array.from({ length: 30 }, (_, i) => call((i % 2 ? a : b).url, 'GET', '/api/v1/domains', { key: other.key })),
    ]));
    expect(statuses(answers.slice(0, 12)).filter((s) => s === 200)).toHaveLength(3);
    expect(statuses(answers.slice(12)).filter((s) => s === 200)).toHaveLength(25);
    expect(answers[0]!.headers.get('x-ratelimit-limit')).toBe('3');
  });

  it('refused requests record nothing: the next window admits the whole cap again', async () => {
    const { key } = await organizationWithKey(a.url, { rate_limit: 2 });
    const answers = await inOneWindow(() => Promise.all(Array.from({ length: 10 }, () => call(a.url, 'GET', '/api/v1/domains', { key }))));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(2);
    const next = await inOneWindow(() => Promise.all([call(a.url, 'GET', '/api/v1/domains', { key }), call(b.url, 'GET', '/api/v1/domains', { key }), call(b.url, 'GET', '/api/v1/domains', { key })]));
    expect(statuses(next)).toEqual([200, 200, 429]);
  });

  it('MCP calls of a mail key count in the same window as its REST calls, on either ingress; the 11th of either is 429 rate_limited', async () => {
    const { key } = await organizationWithKey(a.url);
    const rest = (ingress: TestIngress) => call(ingress.url, 'GET', '/api/v1/contacts?limit=1', { key });
    const mcp = (ingress: TestIngress) => call(ingress.url, 'POST', '/api/mcp', {
      key,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_contacts', arguments: { limit: 1 } } },
    });
    // One after another, so each answer's remaining allowance shows the count so far.
    const answers = await inOneWindow(async () => {
      const sent: Response[] = [];
      for (let i = 0; i < 10; i++) sent.push(await (i % 2 ? rest(i % 4 === 1 ? a : b) : mcp(i % 4 === 0 ? a : b)));
      sent.push(await mcp(a), await rest(b));
      return sent;
    });
    expect(answers.map((r) => r.status)).toEqual([...Array.from({ length: 10 }, () => 200), 429, 429]);
    expect(answers.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['9', '8', '7', '6', '5', '4', '3', '2', '1', '0', '0', '0']);
    // An admitted MCP call is a tool result; a refused one never reaches JSON-RPC: the REST refusal, with Retry-After.
    expect(answers[0]!.body.result.structuredContent).toMatchObject({ object: 'list' });
    expect(answers[10]!.body.error.code).toBe('rate_limited');
    expect(answers[10]!.headers.get('retry-after')).toBe('1');
    expect(answers[11]!.body.name).toBe('rate_limited');
  });
});

describe('POST /emails/batch: one token per message, 100 reserved before the body is read', () => {
  const items = (from: string, n: number) => Array.from({ length: n }, (_, i) => ({ from, to: `r${i}@example.com`, subject: 'Hi', text: 'x' }));

  it('a batch of 100 in an empty second passes at the default cap of 10; another batch in that second gets 429', async () => {
    const { key } = await organizationWithKey(a.url);
    const from = `news@${(await verifiedDomain(a.url, key)).name}`;
    const answers = await inOneWindow(async () => {
      const first = await call(a.url, 'POST', '/emails/batch', { key, body: items(from, 100) });
      const second = await call(b.url, 'POST', '/emails/batch', { key, body: items(from, 1) });
      const single = await call(b.url, 'GET', '/api/v1/domains', { key });
      return [first, second, single];
    });
    expect(answers.map((r) => r.status)).toEqual([200, 429, 429]);
    expect(answers[0]!.body.data).toHaveLength(100);
    expect([answers[1]!.body.name, answers[1]!.body.error.code]).toEqual(['rate_limit_exceeded', 'rate_limited']);
    expect(answers[1]!.headers.get('retry-after')).toBe('1');
  });

  it('unused tokens are refunded: after a batch of 3, seven requests fit in the same second', async () => {
    const { key } = await organizationWithKey(a.url);
    const from = `news@${(await verifiedDomain(a.url, key)).name}`;
    const answers = await inOneWindow(async () => {
      const batch = await call(a.url, 'POST', '/emails/batch', { key, body: items(from, 3) });
      const singles = await Promise.all(Array.from({ length: 9 }, (_, i) => call((i % 2 ? a : b).url, 'GET', '/api/v1/domains', { key })));
      return [batch, ...singles];
    });
    expect(answers[0]!.status).toBe(200);
    expect(answers.slice(1).filter((r) => r.status === 200)).toHaveLength(7);
  });

  it('a refused batch uses no tokens, and a batch in a second that already has requests is refused at the default cap', async () => {
    const { key } = await organizationWithKey(a.url);
    const from = `news@${(await verifiedDomain(a.url, key)).name}`;
    const answers = await inOneWindow(async () => {
      const single = await call(a.url, 'GET', '/api/v1/domains', { key });
      const batch = await call(a.url, 'POST', '/emails/batch', { key, body: items(from, 2) });
      const singles = await Promise.all(Array.from({ length: 10 }, () => call(b.url, 'GET', '/api/v1/domains', { key })));
      return [single, batch, ...singles];
    });
    expect(answers[1]!.status).toBe(429);
    expect(answers.slice(2).filter((r) => r.status === 200)).toHaveLength(9);
  });
});

describe('API_RATE_LIMIT_PER_SEC', () => {
  it('unset, blank or 0 means 10; a value sets the platform default', () => {
    for (const value of [undefined, '', '  ', '0']) expect(defaultRequestsPerSecond(loadServiceConfig({ API_RATE_LIMIT_PER_SEC: value }))).toBe(10);
    expect(defaultRequestsPerSecond(loadServiceConfig({ API_RATE_LIMIT_PER_SEC: '250' }))).toBe(250);
    expect(() => loadServiceConfig({ API_RATE_LIMIT_PER_SEC: '-1' })).toThrow(/API_RATE_LIMIT_PER_SEC/);
  });

  it('sets the cap of keys without their own', async () => {
    const c = await startIngress({ API_RATE_LIMIT_PER_SEC: '4' });
    try {
      const { key } = await organizationWithKey(c.url);
      const answers = await inOneWindow(() => Promise.all(Array.from({ length: 12 }, () => call(c.url, 'GET', '/api/v1/domains', { key }))));
      expect(answers.filter((r) => r.status === 200)).toHaveLength(4);
      expect(answers[0]!.headers.get('x-ratelimit-limit')).toBe('4');
    } finally {
      await c.close();
    }
  });
});
