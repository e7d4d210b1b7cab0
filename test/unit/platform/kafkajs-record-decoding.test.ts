// patches/kafkajs+2.2.4+016: a fetched record's timestamp delta is read as a Number when it fits in 7
// bytes, and its offset and timestamp are added to the batch's as Numbers while that is exact. Each
// record must decode to the same strings as Kafka's layout gives by 64-bit arithmetic, for every delta
// and base, near and past the limits of a Number.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { varint } from '../../support/kafka-varint.ts';

const require = createRequire(import.meta.url);
const decodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/decoder') as (
  decoder: unknown,
  context: { firstOffset: string; firstTimestamp: string; magicByte: number; timestampType?: number; maxTimestamp?: string },
) => { offset: string; timestamp: string; key: Buffer | null; value: Buffer | null; headers: Record<string, unknown> };
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => { offset: number };

/** A record's body (after its length) as Kafka's protocol guide lays it out, with one header. */
function recordBody(timestampDelta: bigint, offsetDelta: bigint): Buffer {
  return Buffer.concat([
    Buffer.from([0]),
    varint(timestampDelta),
    varint(offsetDelta),
    varint(2n), Buffer.from('ws'),
    varint(3n), Buffer.from('val'),
    varint(1n), varint(1n), Buffer.from('h'), varint(1n), Buffer.from('v'),
  ]);
}

describe('kafkajs record decoding (patch 016)', () => {
  const deltas = [0n, 1n, -1n, 63n, 64n, -64n, -65n, 8191n, 8192n, 2n ** 30n, -(2n ** 30n), 2n ** 47n, 2n ** 48n - 1n, -(2n ** 48n), 2n ** 48n, -(2n ** 48n) - 1n, 2n ** 52n, 2n ** 60n, -(2n ** 62n)];
  const offsetDeltas = [0n, 1n, 63n, 64n, 8192n, 2n ** 20n, 2n ** 30n - 1n];
  const bases = [0n, 1733480000000n, 2n ** 53n - 10n, 2n ** 53n + 7n, 2n ** 62n, -1n];

  it('gives the offset and timestamp that 64-bit arithmetic gives, for every delta and base', () => {
    for (const base of bases) {
      for (const [i, timestampDelta] of deltas.entries()) {
        const offsetDelta = offsetDeltas[i % offsetDeltas.length]!;
        const body = recordBody(timestampDelta, offsetDelta);
        const context = { firstOffset: String(base < 0n ? 0n : base), firstTimestamp: String(base), magicByte: 2 };
        const decoder = new Decoder(body);
        const record = decodeRecord(decoder, context);
        expect(record.timestamp).toBe(BigInt.asIntN(64, base + timestampDelta).toString());
        expect(record.offset).toBe(((base < 0n ? 0n : base) + offsetDelta).toString());
        // The rest of the record is read from where the deltas ended.
        expect(record.key?.toString()).toBe('ws');
        expect(record.value?.toString()).toBe('val');
        expect(record.headers.h?.toString()).toBe('v');
        expect(decoder.offset).toBe(body.length);
      }
    }
  });

  it('keeps the broker\'s time for a batch of log-append time', () => {
    const record = decodeRecord(new Decoder(recordBody(5n, 1n)), { firstOffset: '10', firstTimestamp: '1000', magicByte: 2, timestampType: 1, maxTimestamp: '2000' });
    expect(record.timestamp).toBe('2000');
    expect(record.offset).toBe('11');
  });
});
