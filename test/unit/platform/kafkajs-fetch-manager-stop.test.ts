// patches/kafkajs+2.2.4+017: a consumer stopped while its fetch manager replaced its fetchers (the
// brokers leading its partitions changed) must stop, not go on with new fetchers. The runner answers
// every fetch of a stopped consumer at once with no batches, so those new fetchers, which nobody
// stops, looped on promises alone: the event loop ran nothing else, and the process never ended its
// shutdown (broker-faults: a worker that outlived its SIGTERM at 100% CPU).
import { createRequire } from 'node:module';
import { expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const createFetchManager = require('kafkajs/src/consumer/fetchManager') as (options: {
  logger: unknown;
  getNodeIds: () => number[];
  fetch: (nodeId: number) => Promise<unknown[]>;
  handler: (batch: unknown) => Promise<void>;
  concurrency: number;
}) => { start: () => Promise<void>; stop: () => Promise<void> };

const silent = { namespace: () => silent, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('ends its start when stopped while it replaces its fetchers', async () => {
  let running = true; // the runner's own flag: a stopped runner answers fetches at once, empty
  let nodeIds = [1, 2];
  let emptyAnswers = 0;
  const fetched = new Map<number, number>();
  // Node 2's fetch is held out until the test lets it go: the manager then waits for it, between the
  // rebalance and its new fetchers, which is where the stop must land.
  let releaseNode2!: () => void;
  const node2Held = new Promise<void>((r) => (releaseNode2 = r));
  let rebalanceSeen!: () => void;
  const rebalanced = new Promise<void>((r) => (rebalanceSeen = r));
  const manager = createFetchManager({
    logger: silent,
    getNodeIds: () => {
      if (nodeIds.includes(3)) rebalanceSeen(); // node 1's fetcher checks before each fetch, and throws the rebalance
      return nodeIds;
    },
    fetch: async (nodeId) => {
      fetched.set(nodeId, (fetched.get(nodeId) ?? 0) + 1);
      if (!running) {
        // Spinning: break out (an error ends the fetchers) so that this test can fail rather than hang.
        if (++emptyAnswers > 10_000) throw new Error('fetchers spun after the stop');
        return [];
      }
      if (nodeId === 2) await node2Held;
      else await sleep(5);
      return [];
    },
    handler: async () => {},
    concurrency: 1,
  });
  const started = manager.start().then(() => 'ended', (err: Error) => err.message);
  await sleep(20);
  nodeIds = [1, 3]; // a leader moved
  await rebalanced;
  await sleep(0); // a turn of the event loop: node 1's fetcher has thrown, and the manager waits for node 2's to end
  running = false; // the runner stops meanwhile
  const stopped = manager.stop();
  releaseNode2();
  await stopped;
  expect(await started).toBe('ended');
  expect(emptyAnswers).toBeLessThan(10);
  expect(fetched.get(3) ?? 0).toBe(0); // no fetcher made after the stop
});
