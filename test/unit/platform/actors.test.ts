import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../src/platform/actors/backoff.ts';
import { KeyedQueue } from '../../../src/platform/actors/keyed-queue.ts';

describe('backoff', () => {
  it('doubles per attempt within ±20% jitter and respects the cap', () => {
    for (let i = 0; i < 50; i++) {
      const first = backoffDelay(1, 100);
      const third = backoffDelay(3, 100);
      expect(first).toBeGreaterThanOrEqual(80);
      expect(first).toBeLessThanOrEqual(120);
      expect(third).toBeGreaterThanOrEqual(320);
      expect(third).toBeLessThanOrEqual(480);
      expect(backoffDelay(30, 100, 1000)).toBeLessThanOrEqual(1200);
    }
  });
});

describe('KeyedQueue', () => {
  it('runs tasks of one key one at a time, in order, and other keys concurrently', async () => {
    const queue = new KeyedQueue();
    const log: string[] = [];
    let activeA = 0;
    let maxActiveA = 0;
    const task = (key: string, i: number, ms: number) => async () => {
      if (key === 'a') maxActiveA = Math.max(maxActiveA, ++activeA);
      log.push(`${key}${i}:start`);
      await new Promise((r) => setTimeout(r, ms));
      log.push(`${key}${i}:end`);
      if (key === 'a') activeA--;
    };
    await Promise.all([
      queue.run('a', task('a', 1, 30)),
      queue.run('a', task('a', 2, 1)),
      queue.run('b', task('b', 1, 1)),
    ]);
    expect(maxActiveA).toBe(1);
    expect(log.indexOf('a1:end')).toBeLessThan(log.indexOf('a2:start'));
    // b did not wait behind a's slow task.
    expect(log.indexOf('b1:end')).toBeLessThan(log.indexOf('a1:end'));
  });

  it('keeps going after a failed task', async () => {
    const queue = new KeyedQueue();
    await expect(queue.run('k', async () => { throw new Error('boom'); })).rejects.toThrow('boom');
    await expect(queue.run('k', async () => 7)).resolves.toBe(7);
  });
});
