// The per-second window with batch reservations, on the real Redis: the rules of
// src/platform/limits/per-second-window.ts, each checked inside one window of
// Redis's clock (a check that straddled two windows is run again).
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PerSecondWindow } from '../../../src/platform/limits/per-second-window.ts';
import { testConfig } from '../../support/env.ts';
import { redisTls } from '../../../src/platform/redis.ts';

let one: Redis;
let two: Redis;
let a: PerSecondWindow;
let b: PerSecondWindow;

beforeAll(() => {
  one = new Redis(testConfig().REDIS_URL, redisTls(testConfig()));
  two = new Redis(testConfig().REDIS_URL, redisTls(testConfig()));
  // Two connections stand for two ingress instances.
  a = new PerSecondWindow(one, 'test-per-second');
  b = new PerSecondWindow(two, 'test-per-second');
});
afterAll(() => {
  one?.disconnect();
  two?.disconnect();
});

/** Runs `check` starting just after a window turns, again if its decisions name two windows. */
async function inOneWindow<T extends { resetAtMs: number }[]>(check: () => Promise<T>): Promise<T> {
  for (let attempt = 0; attempt < 5; attempt++) {
    for (;;) {
      const ms = Number((await one.time())[1]) / 1000;
      if (ms < 50) break;
      await new Promise((r) => setTimeout(r, 1002 - ms));
    }
    const decisions = await check();
    // Whatever happens next starts in a later window.
    await new Promise((r) => setTimeout(r, 60));
    if (new Set(decisions.map((d) => d.resetAtMs)).size === 1) return decisions;
  }
  throw new Error('no check fell in one window in 5 attempts');
}

const subject = () => `s-${randomUUID()}`;

describe('take', () => {
  it('admits exactly the cap of 200 simultaneous requests from two instances', async () => {
    const s = subject();
    const decisions = await inOneWindow(() => Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).take(s, 10))));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    for (const d of decisions.filter((d) => !d.allowed)) expect(d).toMatchObject({ remaining: 0, retryAfterSeconds: 1, limit: 10 });
  });
});

describe('reserveBatch and refund', () => {
  it('a batch in an empty second passes at cap 10; a second batch in that second is refused even after a refund', async () => {
    const s = subject();
    await inOneWindow(async () => {
      const first = await a.reserveBatch(s, 10, 100);
      expect(first.decision.allowed).toBe(true);
      expect(first.decision.remaining).toBe(0);
      await a.refund(first.reservation!, 97);
      const second = await b.reserveBatch(s, 10, 100);
      expect(second.decision.allowed).toBe(false);
      expect(second.reservation).toBeNull();
      // 3 tokens used: 7 single requests still fit in this second, the 8th does not.
      const singles = await Promise.all(Array.from({ length: 8 }, () => b.take(s, 10)));
      expect(singles.filter((d) => d.allowed)).toHaveLength(7);
      return [first.decision, second.decision, ...singles];
    });
  });

  it('a batch in a non-empty second needs room for all its tokens', async () => {
    const small = subject();
    const large = subject();
    await inOneWindow(async () => {
      const took = [await a.take(small, 10), await a.take(large, 500)];
      const refused = await a.reserveBatch(small, 10, 100);
      const admitted = await b.reserveBatch(large, 500, 100);
      expect(refused.decision.allowed).toBe(false);
      expect(admitted.decision.allowed).toBe(true);
      expect(admitted.decision.remaining).toBe(399);
      // The refused batch recorded nothing: the small subject still has 9 of 10.
      const after = await a.take(small, 10);
      expect(after.remaining).toBe(8);
      return [...took, refused.decision, admitted.decision, after];
    });
  });

  it('admits exactly one of 20 simultaneous batches, and the next window admits one again', async () => {
    const s = subject();
    const decisions = await inOneWindow(async () => (await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).reserveBatch(s, 10, 100)))).map((r) => r.decision));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(1);
    const later = await inOneWindow(async () => [(await a.reserveBatch(s, 10, 100)).decision]);
    expect(later[0]!.allowed).toBe(true);
  });

  it('a refund after the window turned changes nothing', async () => {
    const s = subject();
    const [first] = await inOneWindow(async () => [await a.reserveBatch(s, 10, 100)].map((r) => ({ ...r.decision, reservation: r.reservation })));
    await new Promise((r) => setTimeout(r, 1000));
    await a.refund(first!.reservation!, 100);
    const decisions = await inOneWindow(() => Promise.all(Array.from({ length: 12 }, () => a.take(s, 10))));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
  });
});
