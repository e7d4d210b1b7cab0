// patches/kafkajs+2.2.4+014: a produced record is encoded in one buffer of its exact size, its varints
// written in place. The bytes must be Kafka's record format (v2) exactly, for every kind of field.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { varint } from '../../support/kafka-varint.ts';

const require = createRequire(import.meta.url);
const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (r: { offsetDelta?: number; timestampDelta?: number; key: unknown; value: unknown; headers?: Record<string, unknown> }) => { buffer: Buffer };
const Encoder = require('kafkajs/src/protocol/encoder') as new () => { writeEncoderArray(v: unknown[]): { buffer: Buffer }; writeVarLong(v: unknown): { buffer: Buffer } };

const bytesOf = (v: unknown): Buffer | null => (v == null ? null : Buffer.isBuffer(v) ? v : Buffer.from(String(v)));
const sized = (v: unknown): Buffer => {
  const b = bytesOf(v);
  return b === null ? varint(-1) : Buffer.concat([varint(b.length), b]);
};

/** A record as Kafka's protocol guide lays it out (record v2). */
function reference(r: { offsetDelta: number; timestampDelta: number; key: unknown; value: unknown; headers: Record<string, unknown> }): Buffer {
  const headers = Object.entries(r.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x] as const) : [[k, v] as const]));
  const body = Buffer.concat([
    Buffer.from([0]),
    varint(r.timestampDelta),
    varint(r.offsetDelta),
    sized(r.key),
    sized(r.value),
    varint(headers.length),
    ...headers.flatMap(([k, v]) => [sized(k), sized(v)]),
  ]);
  return Buffer.concat([varint(body.length), body]);
}

describe('kafkajs record encoding (patch 014)', () => {
  const keys = [null, 'ws-1', 'wörkspace-é', Buffer.from([0, 1, 2]), Buffer.alloc(0)];
  const values = [null, Buffer.alloc(0), Buffer.from('v'), Buffer.alloc(300, 7), Buffer.alloc(70_000, 9), 'a string value'];
  const headerSets: Record<string, unknown>[] = [{}, { a: 'b' }, { 'x-trace': Buffer.from('abc'), multi: ['1', '22'] }];
  // Small and large, negative, on the varint/varlong boundaries.
  const numbers = [0, 1, -1, 63, 64, -64, -65, 127, 128, 8191, 8192, 2 ** 20, 2 ** 30 - 1, 2 ** 30, -(2 ** 30), -(2 ** 30) - 1, 2 ** 31, 2 ** 40 + 5, -(2 ** 40)];

  it('writes every record as the format lays it out, with no spare bytes', () => {
    for (const key of keys) for (const value of values) for (const headers of headerSets) {
      for (const [i, timestampDelta] of numbers.entries()) {
        const offsetDelta = [0, 1, 63, 64, 8192, 2 ** 20][i % 6]!;
        const record = Record({ offsetDelta, timestampDelta, key, value, headers });
        const expected = reference({ offsetDelta, timestampDelta, key, value, headers });
        expect(record.buffer.equals(expected)).toBe(true);
      }
    }
  });

  it('writes varlongs of any size, and joins records into one buffer in order', () => {
    for (const n of numbers) expect(new Encoder().writeVarLong(n).buffer.equals(varint(n))).toBe(true);
    const records = values.map((value, i) => Record({ offsetDelta: i, timestampDelta: i * 1000, key: 'k', value, headers: {} }));
    expect(new Encoder().writeEncoderArray(records).buffer.equals(Buffer.concat(records.map((r) => r.buffer)))).toBe(true);
    expect(() => new Encoder().writeEncoderArray([Buffer.from('not an encoder')])).toThrow('all values should be an instance of Encoder[]');
  });
});
