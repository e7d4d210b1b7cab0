import { describe, expect, it } from 'vitest';
import { Coalescer } from '../../../src/platform/coalescer.ts';

/** A runner that records its batches and answers each item doubled (odd items refused), after `release`. */
function recording() {
  const batches: number[][] = [];
  let release: () => void = () => {};
  const coalescer = new Coalescer<number, number>(async (items) => {
    batches.push(items);
    await new Promise<void>((resolve) => (release = resolve));
    return items.map((n) => (n % 2 === 1 ? { status: 'rejected', reason: new Error(`odd ${n}`) } : { status: 'fulfilled', value: n * 2 }));
  }, 3);
  return { batches, coalescer, release: () => release() };
}

describe('Coalescer', () => {
  it('runs a lone call at once, and gathers the calls made meanwhile into the next batches of at most maxBatch', async () => {
    const { batches, coalescer, release } = recording();
    const first = coalescer.call(0);
    expect(batches).toEqual([[0]]);
    const later = [2, 4, 6, 8].map((n) => coalescer.call(n));
    expect(batches).toHaveLength(1);
    release();
    expect(await first).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[0], [2, 4, 6]]);
    release();
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[0], [2, 4, 6], [8]]);
    release();
    expect(await Promise.all(later)).toEqual([4, 8, 12, 16]);
  });

  it('gives each caller its own result or error, and a failing batch fails only its own callers', async () => {
    const { coalescer, release } = recording();
    const results = Promise.allSettled([coalescer.call(2), coalescer.call(3)]);
    release();
    await new Promise((r) => setImmediate(r));
    release();
    const [even, odd] = await results;
    expect(even).toEqual({ status: 'fulfilled', value: 4 });
    expect(odd.status === 'rejected' && (odd.reason as Error).message).toBe('odd 3');

    let calls = 0;
    const failing = new Coalescer<number, number>(async (items) => {
      if (calls++ === 0) throw new Error('down');
      return items.map((n) => ({ status: 'fulfilled' as const, value: n }));
    });
    const a = failing.call(1);
    const b = failing.call(2);
    await expect(a).rejects.toThrow('down');
    expect(await b).toBe(2);
  });

  it('runs a batch again item by item when it failed with an error an item can cause, so only the bad item\'s caller fails', async () => {
    const batches: string[][] = [];
    const refused = Object.assign(new Error('invalid byte sequence'), { code: '22021' });
    const byValue = (err: unknown) => (err as { code?: string }).code === '22021';
    let hold: Promise<void> | undefined = new Promise<void>((resolve) => setTimeout(resolve, 10));
    const coalescer = new Coalescer<string, string>(async (items) => {
      batches.push(items);
      if (hold) await hold;
      hold = undefined;
      if (items.some((v) => v.includes('\u0000'))) throw refused;
      return items.map((v) => ({ status: 'fulfilled' as const, value: v.toUpperCase() }));
    }, 10, byValue);
    const calls = ['a', 'b\u0000', 'c', 'd'].map((v) => coalescer.call(v));
    const results = await Promise.allSettled(calls);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['A', 'invalid byte sequence', 'C', 'D']);
    expect(batches).toEqual([['a'], ['b\u0000', 'c', 'd'], ['b\u0000'], ['c'], ['d']]);

    // Any other error (the database is down) still fails the whole batch, without running it again.
    let runs = 0;
    const down = new Coalescer<string, string>(async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 5));
      throw new Error('down');
    }, 10, byValue);
    const all = await Promise.allSettled(['x', 'y', 'z'].map((v) => down.call(v)));
    expect(all.every((r) => r.status === 'rejected')).toBe(true);
    expect(runs).toBe(2);
  });
});
