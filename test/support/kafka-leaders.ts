// The leaders of a topic's partitions as one given broker sees them, asked over Kafka's wire
// protocol (Metadata v0). kafkajs sends a metadata request to any broker of the cluster, which hangs
// when that broker is stopped (SIGSTOP); a fault test asks one that runs.
import { connect } from 'node:net';

/** Leader node id per partition (index = partition; -1 while it has none), as the broker at `address` knows them. */
export async function leadersSeenBy(address: string, topic: string, timeoutMs = 5000): Promise<number[]> {
  const [host, port] = address.split(':') as [string, string];
  const clientId = Buffer.from('test-leaders');
  const name = Buffer.from(topic);
  const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length + 4 + 2 + name.length);
  let at = body.writeInt16BE(3, 0); // api key: Metadata
  at = body.writeInt16BE(0, at); // version 0
  at = body.writeInt32BE(1, at); // correlation id
  at = body.writeInt16BE(clientId.length, at);
  at += clientId.copy(body, at);
  at = body.writeInt32BE(1, at); // one topic
  at = body.writeInt16BE(name.length, at);
  name.copy(body, at);
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);

  const response = await new Promise<Buffer>((resolve, reject) => {
    const socket = connect({ host, port: Number(port) }, () => socket.write(Buffer.concat([size, body])));
    const chunks: Buffer[] = [];
    let received = 0;
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no metadata from ${address} within ${timeoutMs} ms`)));
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received >= 4 && received >= 4 + Buffer.concat(chunks).readInt32BE(0)) {
        socket.end();
        resolve(Buffer.concat(chunks).subarray(4));
      }
    });
    socket.on('error', reject);
  });

  let pos = 4; // past the correlation id
  const int16 = () => ((pos += 2), response.readInt16BE(pos - 2));
  const int32 = () => ((pos += 4), response.readInt32BE(pos - 4));
  const string = () => {
    const length = int16();
    pos += length;
    return response.toString('utf8', pos - length, pos);
  };
  for (let brokers = int32(); brokers > 0; brokers--) {
    int32(); // node id
    string(); // host
    int32(); // port
  }
  if (int32() !== 1) throw new Error(`metadata of ${address}: expected one topic`);
  const error = int16();
  string();
  if (error !== 0) throw new Error(`metadata of ${address} for ${topic}: error code ${error}`);
  const leaders: number[] = [];
  for (let partitions = int32(); partitions > 0; partitions--) {
    int16(); // the partition's error code (LEADER_NOT_AVAILABLE comes with leader -1)
    const partition = int32();
    leaders[partition] = int32();
    for (let replicas = int32(); replicas > 0; replicas--) int32();
    for (let isr = int32(); isr > 0; isr--) int32();
  }
  return leaders;
}
