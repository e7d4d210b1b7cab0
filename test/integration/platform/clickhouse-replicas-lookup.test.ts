// A table's replica count is looked up once per client and shared; a caller with a deadline (a
// lifetime-scans count for the API) bounds its own look-up with its signal. Its abort must fail only
// itself: the scan-limit closer asking at the same moment, without a deadline, gets its answer.
import { afterEach, expect, it } from 'vitest';
import { createClickHouse, type ClickHouse } from '../../../src/platform/clickhouse/client.ts';
import { replicasOf } from '../../../src/platform/clickhouse/replication.ts';
import { testConfig } from '../../support/env.ts';

let clickhouse: ClickHouse | undefined;
afterEach(async () => clickhouse?.close());

it('fails only the caller whose signal aborted, not one asking at the same time without a deadline', async () => {
  clickhouse = createClickHouse(testConfig());
  const aborted = replicasOf(clickhouse, 'scans', AbortSignal.abort(new Error('the caller gave up')));
  const plain = replicasOf(clickhouse, 'scans');
  await expect(aborted).rejects.toThrow('the caller gave up');
  // 0 on a single server, 3 on the suite's replicas: a count either way.
  expect(await plain).toBeGreaterThanOrEqual(0);
});

it('bounds a caller with a deadline while a shared look-up is still out, and keeps a bounded answer for the others', async () => {
  clickhouse = createClickHouse(testConfig());
  const shared = replicasOf(clickhouse, 'scans');
  const controller = new AbortController();
  const bounded = replicasOf(clickhouse, 'scans', controller.signal);
  controller.abort(new Error('deadline'));
  await expect(bounded).rejects.toThrow('deadline');
  const replicas = await shared;
  // Known now: a caller with a signal gets it without a request of its own.
  expect(await replicasOf(clickhouse, 'scans', new AbortController().signal)).toBe(replicas);
});
