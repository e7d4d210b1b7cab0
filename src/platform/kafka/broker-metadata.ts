// What one given broker knows of some topics: Kafka's Metadata request (version 4, which Kafka 1.0
// to 4.x answer) sent to that broker alone, over a plain connection as the client's. kafkajs sends
// its metadata requests to whichever broker it picks, and for a moment after a topic is created
// some brokers know it and others answer UNKNOWN_TOPIC_OR_PARTITION.
// A cluster that asks for TLS or SASL is asked through a kafkajs client of that one broker instead
// (its TLS and SASL handshakes, SCRAM's among them, are kafkajs's: not written again here).
import { connect } from 'node:net';
import { Kafka, logLevel, type KafkaConfig } from 'kafkajs';

export interface TopicAsKnown {
  name: string;
  /** 0, or the broker's error for the topic (3: UNKNOWN_TOPIC_OR_PARTITION). */
  errorCode: number;
  /** The leader's node id per partition (index = partition), -1 where it has none. */
  leaders: number[];
}

const METADATA = 3;
const VERSION = 4;

export async function topicsAsKnownBy(host: string, port: number, topics: readonly string[], timeoutMs = 5000, security: Pick<KafkaConfig, 'ssl' | 'sasl'> = {}): Promise<TopicAsKnown[]> {
  if (security.ssl || security.sasl) return topicsAsKnownThroughKafkajs(host, port, topics, timeoutMs, security);
  return parse(await exchange(host, port, request(topics), timeoutMs));
}

/**
 * The same question through a kafkajs client whose only broker is this one: a new client's first
 * metadata request goes to its seed broker, the one connection it has. A topic the broker does not
 * know yet makes kafkajs throw (UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE): every topic asked
 * is then reported with that error, to be asked again.
 */
async function topicsAsKnownThroughKafkajs(host: string, port: number, topics: readonly string[], timeoutMs: number, security: Pick<KafkaConfig, 'ssl' | 'sasl'>): Promise<TopicAsKnown[]> {
  const admin = new Kafka({
    clientId: 'linkmail-metadata',
    brokers: [`${host}:${port}`],
    ...security,
    // A new object: kafkajs keeps its SASL authenticator (and the password it was made with) on the options it is given.
    ...(security.sasl ? { sasl: { ...security.sasl } } : {}),
    connectionTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
  }).admin();
  try {
    await admin.connect();
    const { topics: known } = await admin.fetchTopicMetadata({ topics: [...topics] });
    return known.map((t) => ({ name: t.name, errorCode: 0, leaders: t.partitions.map((p) => p.leader) }));
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (typeof code !== 'number') throw err;
    return topics.map((name) => ({ name, errorCode: code, leaders: [] }));
  } finally {
    await admin.disconnect();
  }
}

function request(topics: readonly string[]): Buffer {
  const clientId = Buffer.from('linkmail-metadata');
  const names = topics.map((t) => Buffer.from(t));
  const body = Buffer.alloc(4 + 2 + 2 + 4 + 2 + clientId.length + 4 + names.reduce((n, b) => n + 2 + b.length, 0) + 1);
  let at = body.writeInt32BE(body.length - 4, 0);
  at = body.writeInt16BE(METADATA, at);
  at = body.writeInt16BE(VERSION, at);
  at = body.writeInt32BE(1, at); // correlation id
  at = body.writeInt16BE(clientId.length, at);
  at += clientId.copy(body, at);
  at = body.writeInt32BE(names.length, at);
  for (const name of names) {
    at = body.writeInt16BE(name.length, at);
    at += name.copy(body, at);
  }
  body.writeInt8(0, at); // allow_auto_topic_creation: false
  return body;
}

/** Sends one request and resolves with the response after its size and correlation id. */
function exchange(host: string, port: number, frame: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port }, () => socket.write(frame));
    let received = Buffer.alloc(0);
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no metadata from ${host}:${port} within ${timeoutMs} ms`)));
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= 4 && received.length >= 4 + received.readInt32BE(0)) {
        socket.end();
        resolve(received.subarray(8));
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`${host}:${port} closed the connection before answering`)));
  });
}

function parse(response: Buffer): TopicAsKnown[] {
  let pos = 0;
  const int16 = () => ((pos += 2), response.readInt16BE(pos - 2));
  const int32 = () => ((pos += 4), response.readInt32BE(pos - 4));
  const string = () => {
    const length = int16();
    if (length < 0) return null;
    pos += length;
    return response.toString('utf8', pos - length, pos);
  };
  int32(); // throttle time
  for (let brokers = int32(); brokers > 0; brokers--) {
    int32(); // node id
    string(); // host
    int32(); // port
    string(); // rack
  }
  string(); // cluster id
  int32(); // controller id
  const topics: TopicAsKnown[] = [];
  for (let count = int32(); count > 0; count--) {
    const errorCode = int16();
    const name = string() ?? '';
    pos += 1; // is_internal
    const leaders: number[] = [];
    for (let partitions = int32(); partitions > 0; partitions--) {
      int16(); // the partition's error (LEADER_NOT_AVAILABLE comes with leader -1)
      const partition = int32();
      leaders[partition] = int32();
      for (let replicas = int32(); replicas > 0; replicas--) int32();
      for (let isr = int32(); isr > 0; isr--) int32();
    }
    topics.push({ name, errorCode, leaders });
  }
  return topics;
}
