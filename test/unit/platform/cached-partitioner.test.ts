import { randomUUID } from 'node:crypto';
import { Partitioners, type PartitionerArgs } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { CachedDefaultPartitioner } from '../../../src/platform/kafka/cached-partitioner.ts';

const metadata = (n: number) => Array.from({ length: n }, (_, i) => ({ partitionId: i, leader: 0, replicas: [0], isr: [0], partitionErrorCode: 0, offlineReplicas: [] }));

describe('cached default partitioner', () => {
  it('puts every keyed message where the default partitioner does, asked once or many times', () => {
    const cached = CachedDefaultPartitioner();
    const plain = Partitioners.DefaultPartitioner();
    for (const partitions of [1, 3, 6, 12]) {
      for (let i = 0; i < 300; i++) {
        const args: PartitionerArgs = { topic: 'scans', partitionMetadata: metadata(partitions), message: { key: randomUUID(), value: 'v' } };
        const expected = plain(args);
        expect(cached(args)).toBe(expected);
        expect(cached(args)).toBe(expected);
      }
    }
  });

  it('keeps an explicit partition and spreads unkeyed messages as the default does', () => {
    const cached = CachedDefaultPartitioner();
    expect(cached({ topic: 't', partitionMetadata: metadata(6), message: { key: 'k', partition: 4, value: 'v' } })).toBe(4);
    const seen = new Set(Array.from({ length: 30 }, () => cached({ topic: 't', partitionMetadata: metadata(6), message: { value: 'v' } })));
    expect(seen.size).toBeGreaterThan(1);
  });
});
