// Every message whose send resolved is on the cluster, when a broker hangs mid-send (kafkajs #1303:
// a send's retry skipped the brokers that had answered its first attempt, even where the hung broker's
// partitions had moved to them, and resolved without writing those; patches/kafkajs+2.2.4+002+acknowledged-sends.patch).
// Four producers with the project's client settings send 60-message batches over six partitions
// (acks=all, replication factor 3, min.insync.replicas 2) while the leader of some partitions is
// stopped (SIGSTOP) until the others have taken its partitions, then resumed.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Kafka, Producer } from 'kafkajs';
import { createKafka } from '../../../src/platform/kafka/client.ts';
import { CachedDefaultPartitioner } from '../../../src/platform/kafka/cached-partitioner.ts';
import { topicsAsKnownBy } from '../../../src/platform/kafka/broker-metadata.ts';
import { ensureTopics } from '../../../src/platform/kafka/topics.ts';
import { createLogger } from '../../../src/platform/logger.ts';
import { eventually } from '../../support/env.ts';
import { NODES, sharedTestCluster, type Node, type TestCluster } from '../../support/kafka-cluster.ts';

const TOPIC = 'acknowledged-sends';
const PRODUCERS = 4;
const BATCH = 60;
/** Sends per producer before the broker is stopped, and after it is back, before the producers stop. */
const SENDS_BEFORE = 20;
const SENDS_AFTER = 10;
/** Bounds the run should the cluster never recover: no producer sends more. */
const MAX_SENDS = 400;

// kafkajs logs every retry; the test counts what was acknowledged instead.
const log = createLogger({ LOG_LEVEL: 'silent' });
let cluster: TestCluster;
const kafkaOf = (brokers: string, clientId: string): Kafka => createKafka({ KAFKA_BROKERS: brokers, KAFKA_CLIENT_ID: clientId }, log);

/** The topic's leader per partition as this node sees it (kafkajs would ask any node, and hang on the stopped one). */
const leadersSeenBy = async (node: Node) => (await topicsAsKnownBy('127.0.0.1', cluster.portOf(node), [TOPIC]))[0]!.leaders;

beforeAll(async () => {
  cluster = await sharedTestCluster();
});
afterAll(async () => {
  await cluster?.release();
});

it('resolves a send only when every one of its messages is written, while a leader hangs and its partitions move', async () => {
  const admin = kafkaOf(cluster.brokers, 'test-admin').admin();
  await admin.connect();
  await ensureTopics(admin, '', [{ name: TOPIC, partitions: 6, key: 'message id', cleanupPolicy: 'delete', valueSchema: '', description: 'test' }], log);
  const stopped = (await leadersSeenBy(1))[0] as Node;
  const running = NODES.find((n) => n !== stopped)!;

  const acknowledged = new Set<string>();
  const sends = Array<number>(PRODUCERS).fill(0);
  let failed = 0;
  let stopping = false;
  const producers: Producer[] = [];
  const produce = async (p: number) => {
    const producer = kafkaOf(cluster.brokers, `test-producer-${p}`).producer({ allowAutoTopicCreation: false, createPartitioner: CachedDefaultPartitioner });
    producers.push(producer);
    await producer.connect();
    while (!stopping && sends[p]! < MAX_SENDS) {
      // Unique ids as keys: each batch spans all six partitions, so every broker leads part of it.
      const ids = Array.from({ length: BATCH }, (_, i) => `${p}-${sends[p]}-${i}`);
      try {
        await producer.send({ topic: TOPIC, acks: -1, messages: ids.map((id) => ({ key: id, value: id })) });
        for (const id of ids) acknowledged.add(id);
      } catch {
        failed++; // not acknowledged, so not promised
      }
      sends[p]!++;
    }
  };
  const producing = Promise.all(Array.from({ length: PRODUCERS }, (_, p) => produce(p)));

  await eventually(async () => sends.every((n) => n >= SENDS_BEFORE), 60_000, 50);
  cluster.pause(stopped);
  const pausedAt = Date.now();
  // Resumed once the running brokers lead all of its partitions: its answers to the sends it holds then fail.
  await eventually(async () => (await leadersSeenBy(running)).every((leader) => leader !== stopped && leader >= 0), 60_000, 250);
  cluster.resume(stopped);
  const paused = Date.now() - pausedAt;
  const sendsAtResume = [...sends];
  await eventually(async () => sends.every((n, p) => n >= sendsAtResume[p]! + SENDS_AFTER), 90_000, 50);
  stopping = true;
  await producing;
  await Promise.all(producers.map((p) => p.disconnect()));

  // Everything the topic holds, read back to its end.
  const ends = await admin.fetchTopicOffsets(TOPIC);
  const total = ends.reduce((sum, p) => sum + Number(p.high), 0);
  const written = new Set<string>();
  let read = 0;
  const consumer = kafkaOf(cluster.brokers, 'test-reader').consumer({ groupId: 'test-reader' });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) written.add(m.value!.toString());
      read += batch.messages.length;
    },
  });
  await eventually(async () => read >= total, 60_000, 100);
  await consumer.disconnect();
  await admin.disconnect();

  const missing = [...acknowledged].filter((id) => !written.has(id));
  const summary = { acknowledged: acknowledged.size, failedSends: failed, written: written.size, missing: missing.length, stoppedNode: stopped, pausedMs: paused };
  expect(summary).toEqual({ ...summary, missing: 0 });
}, 240_000);
