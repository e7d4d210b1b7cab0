import { expect, it } from 'vitest';
import { deterministicBlocks } from '../../../src/platform/clickhouse/idempotent-sink.ts';
import { quorumOf } from '../../../src/platform/clickhouse/replication.ts';

const event = (id: string, workspace: string) => ({ id, workspace });
const idOf = (e: { id: string }) => e.id;

it('cuts the same events into the same blocks whatever order they came in, so a retried insert repeats its blocks exactly', () => {
  // Two tenants batched together, interleaved.
  const events = Array.from({ length: 23 }, (_, i) => event(`id-${String((i * 7) % 23).padStart(2, '0')}`, i % 2 ? 'w1' : 'w2'));
  const blocks = deterministicBlocks(events, idOf, 10);
  expect(blocks.map((b) => b.length)).toEqual([10, 10, 3]);
  expect(blocks.flat().map(idOf)).toEqual([...events.map(idOf)].sort());
  const reversed = deterministicBlocks([...events].reverse(), idOf, 10);
  const shuffled = deterministicBlocks([...events.slice(11), ...events.slice(0, 11)], idOf, 10);
  expect(reversed).toEqual(blocks);
  expect(shuffled).toEqual(blocks);
  // Ordered by code unit, as ClickHouse compares strings, not by locale.
  expect(deterministicBlocks([event('b', 'w'), event('B', 'w'), event('a', 'w')], idOf, 5)[0]!.map(idOf)).toEqual(['B', 'a', 'b']);
  expect(deterministicBlocks([], idOf, 10)).toEqual([]);
});

it('asks a majority of the replicas for a quorum insert', () => {
  expect(quorumOf(3)).toBe(2);
  expect(quorumOf(5)).toBe(3);
  // One replica: ClickHouse takes a quorum of 1 as none.
  expect(quorumOf(1)).toBe(1);
});
