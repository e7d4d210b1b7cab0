// The redirect limiter against the real Redis: two limiter objects with their
// own connections stand for two ingress processes. Alternating traffic is
// counted exactly, a simultaneous burst or an out-of-date instance passes the
// limit by at most one per instance, Redis holds what was admitted, and the
// window slides.
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { BufferedSlidingWindow } from '../../../src/platform/limits/buffered-sliding-window.ts';
import { createRedis, type Redis } from '../../../src/platform/redis.ts';
import { testConfig } from '../../support/env.ts';
import { createLogger } from '../../../src/platform/logger.ts';

const connections: Redis[] = [];
function connect(): Redis {
  const redis = createRedis(testConfig(), createLogger(testConfig(), 'test'));
  connections.push(redis);
  return redis;
}
function instance(limit: number, windowMs = 60_000): BufferedSlidingWindow {
  return new BufferedSlidingWindow(connect(), `test-${randomUUID().slice(0, 8)}`, limit, windowMs);
}
/** Two instances of one limit (60 a minute), each with its own connection, as two ingress processes have. */
function twoInstances() {
  const name = `test-${randomUUID().slice(0, 8)}`;
  const redis = connect();
  return { name, redis, a: new BufferedSlidingWindow(redis, name, 60, 60_000), b: new BufferedSlidingWindow(connect(), name, 60, 60_000) };
}
afterAll(async () => {
  await Promise.all(connections.map((r) => r.quit()));
});

/** What the redirect route does: admit here, or ask Redis. */
async function admit(limiter: BufferedSlidingWindow, subject: string): Promise<boolean> {
  return limiter.admitLocally(subject) || (await limiter.hit(subject)).allowed;
}

/** The count Redis holds for a subject (the sum of its per-second fields). */
async function countInRedis(redis: Redis, name: string, subject: string): Promise<number> {
  const fields = await redis.hgetall(`limit:${name}:${subject}`);
  return Object.values(fields).reduce((sum, v) => sum + Number(v), 0);
}

describe('buffered sliding-window limit', () => {
  it('admits exactly 60 sequential events alternating two instances, then refuses with a retry time', async () => {
    const { name, a, b, redis } = twoInstances();
    const subject = randomUUID();
    for (let i = 0; i < 60; i++) {
      expect(await admit(i % 2 ? a : b, subject), `event ${i + 1}`).toBe(true);
      // Requests of one client are an HTTP round trip apart: time for the count to reach Redis.
      await new Promise((r) => setTimeout(r, 5));
    }
    // Both instances now know: every further event goes to Redis and is refused.
    for (const limiter of [a, b]) {
      expect(limiter.admitLocally(subject)).toBe(false);
      const refused = await limiter.hit(subject);
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterSeconds).toBeGreaterThan(0);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(61);
    }
    expect(await countInRedis(redis, name, subject)).toBe(60);
  });

  it('overshoots a simultaneous burst on two instances by at most one per instance (neither knew the IP), and Redis counts every admitted event', async () => {
    const { name, a, b, redis } = twoInstances();
    const limiters = [a, b];
    const subject = randomUUID();
    // 200 events in the same turn of the event loop, split over the two instances.
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => admit(limiters[i % 2]!, subject)));
    const admitted = results.filter(Boolean).length;
    expect(admitted).toBeGreaterThanOrEqual(60);
    expect(admitted).toBeLessThanOrEqual(62);
    expect(await countInRedis(redis, name, subject)).toBe(admitted);
  });

  it('keeps subjects apart and admits again once the window has passed', async () => {
    const limiter = instance(3, 2000);
    const [one, two] = [randomUUID(), randomUUID()];
    expect(await Promise.all([1, 2, 3, 4].map(() => admit(limiter, one)))).toEqual([true, true, true, false]);
    expect(await admit(limiter, two)).toBe(true);
    // Counted per second of Redis's clock and kept until that second is wholly out of the window.
    await new Promise((r) => setTimeout(r, 3100));
    expect(await admit(limiter, one)).toBe(true);
  });

  it('gives an instance with an out-of-date count at most one redirect past the limit', async () => {
    const { name, a, b, redis } = twoInstances();
    const subject = randomUUID();
    expect(await admit(a, subject)).toBe(true);
    // A's count of the subject goes stale (older than a second) while B uses up the minute.
    await new Promise((r) => setTimeout(r, 1100));
    let onB = 0;
    for (let i = 0; i < 70; i++) {
      if (await admit(b, subject)) onB++;
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(onB).toBe(59);
    const late = await Promise.all([1, 2, 3].map(() => admit(a, subject)));
    expect(late.filter(Boolean).length).toBeLessThanOrEqual(1);
    expect(await countInRedis(redis, name, subject)).toBeLessThanOrEqual(61);
  });

  it('sends a busy instance\'s admitted events in a call every few milliseconds, not one per event-loop turn, and counts every one', async () => {
    const name = `test-${randomUUID().slice(0, 8)}`;
    const redis = connect();
    const limiter = new BufferedSlidingWindow(redis, name, 1_000_000, 60_000);
    const subjects = Array.from({ length: 20 }, () => randomUUID());
    // Each subject's count known (fresh: Redis decided an event), so that the events below are admitted here.
    for (const subject of subjects) expect((await limiter.hit(subject)).allowed).toBe(true);
    // Redis's own MONITOR sees every script call that touches this limit's keys.
    const monitor = await redis.monitor();
    let calls = 0;
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (/^eval/i.test(args[0] ?? '') && args.some((a) => a.startsWith(`limit:${name}:`))) calls++;
    });
    try {
      await new Promise((r) => setTimeout(r, 100));
      for (let i = 0; i < 400; i++) {
        expect(limiter.admitLocally(subjects[i % subjects.length]!)).toBe(true);
        // One event a turn, as a busy ingress answering one request a turn.
        await new Promise((r) => setImmediate(r));
      }
      await new Promise((r) => setTimeout(r, 100));
      // A call per turn would be 400.
      expect(calls).toBeGreaterThan(0);
      expect(calls).toBeLessThan(100);
    } finally {
      monitor.disconnect();
    }
    // Nothing lost on the way: Redis holds every event (the one it decided and 20 more a subject).
    for (const subject of subjects) expect(await countInRedis(redis, name, subject)).toBe(21);
  });

  it('sends at the end of the turn once an event waits for Redis\'s decision, taking along the counts that were waiting for the interval', async () => {
    const name = `test-${randomUUID().slice(0, 8)}`;
    const redis = connect();
    // An interval of a minute: a decision that waited for it would time the test out.
    const limiter = new BufferedSlidingWindow(redis, name, 1_000_000, 60_000, { sendIntervalMs: 60_000 });
    const [far, asked] = [randomUUID(), randomUUID()];
    expect((await limiter.hit(far)).allowed).toBe(true);
    // A call just went: this admitted event waits for the interval...
    expect(limiter.admitLocally(far)).toBe(true);
    // ...until an event in the same turn waits for a decision: one call at the end of this turn takes both.
    const decided = Date.now();
    expect((await limiter.hit(asked)).allowed).toBe(true);
    expect(Date.now() - decided).toBeLessThan(10_000);
    expect(await countInRedis(redis, name, far)).toBe(2);
    expect(await countInRedis(redis, name, asked)).toBe(1);
  });

  it('decides events locally for a subject far below the limit once Redis has reported its count (no wait on Redis)', async () => {
    const limiter = instance(1000);
    const subject = randomUUID();
    // Never seen: one event on trust, the next waits for Redis.
    expect(limiter.admitLocally(subject)).toBe(true);
    expect(limiter.admitLocally(subject)).toBe(false);
    expect((await limiter.hit(subject)).allowed).toBe(true);
    // Now the count is fresh: up to the headroom (1000/12 → 84) of unconfirmed events are admitted here.
    let local = 0;
    while (limiter.admitLocally(subject)) local++;
    expect(local).toBe(84);
  });
});
