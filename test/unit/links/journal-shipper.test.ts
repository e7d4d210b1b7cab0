// The scan journal's shipper splits what it sends to Kafka into bounded produce requests.
import { describe, expect, it } from 'vitest';
import { batchesOf } from '../../../src/links/scans/journal-shipper.ts';

describe('scan journal batches', () => {
  it('keeps every produce request under 512 KiB and the record count', () => {
    const big = { ua: 'x'.repeat(6000) };
    const batches = batchesOf(Array.from({ length: 400 }, () => big), 250);
    expect(batches.flat()).toHaveLength(400);
    for (const b of batches) expect(JSON.stringify(b).length).toBeLessThanOrEqual(512 * 1024 + 7000);
    expect(batches.length).toBeGreaterThan(4);
    expect(batchesOf(Array.from({ length: 600 }, () => ({ a: 1 })), 250).map((b) => b.length)).toEqual([250, 250, 100]);
  });
});
