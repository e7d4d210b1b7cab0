// Kafka's zigzag varint of any 64-bit integer, written the plain way (the protocol guide's layout):
// what the kafkajs record patches' tests compare kafkajs's own bytes and numbers with.
export function varint(n: bigint | number): Buffer {
  const v = BigInt(n);
  let z = v >= 0n ? v << 1n : ((-v) << 1n) - 1n;
  const bytes: number[] = [];
  while (z >= 0x80n) {
    bytes.push(Number(z & 0x7fn) | 0x80);
    z >>= 7n;
  }
  bytes.push(Number(z));
  return Buffer.from(bytes);
}
