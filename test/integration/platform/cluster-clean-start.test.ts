// Processes start cleanly on a fresh three-node Kafka cluster: topic creation returns only once
// every broker knows the new topics (until then a broker answers UNKNOWN_TOPIC_OR_PARTITION, which
// kafkajs's metadata refresh does not retry), and an ingress and a worker process started at once
// (on the run's databases, migrated already, so both create their topics at the same moment; nothing
// else runs beside this file, whose work they could take) both come up and stay up. With a broker
// dead, metadata and admin requests go to the others, and topics are still created.
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { topicsAsKnownBy } from '../../../src/platform/kafka/broker-metadata.ts';
import { createKafka } from '../../../src/platform/kafka/client.ts';
import { ensureTopics } from '../../../src/platform/kafka/topics.ts';
import { createLogger } from '../../../src/platform/logger.ts';
import { serviceTopics } from '../../../src/service.ts';
import { eventually } from '../../support/env.ts';
import { NODES, sharedTestCluster, type TestCluster } from '../../support/kafka-cluster.ts';
import { childPort, startTs, stopChild, waitForOutput, type Child } from '../../support/processes.ts';

const started: Child[] = [];
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await sharedTestCluster();
});
afterAll(async () => {
  await Promise.all(started.map((c) => stopChild(c)));
  await cluster?.release();
}, 60_000);

it('returns from creating topics once every broker knows them', async () => {
  const log = createLogger({ LOG_LEVEL: 'silent' });
  const admin = createKafka({ KAFKA_BROKERS: cluster.brokers, KAFKA_CLIENT_ID: 'test' }, log).admin();
  await admin.connect();
  // Two rounds: how far each broker lags varies.
  for (const round of [1, 2]) {
    const prefix = `known-${round}`;
    await ensureTopics(admin, prefix, serviceTopics, log);
    const names = serviceTopics.map((d) => `${prefix}.${d.name}`);
    const unknown = (await Promise.all(NODES.map(async (node) => (await topicsAsKnownBy('127.0.0.1', cluster.portOf(node), names)).filter((t) => t.errorCode !== 0).map((t) => `${t.name} on ${node}`)))).flat();
    expect(unknown).toEqual([]);
  }
  await admin.disconnect();
});

it('asks the brokers left while one is dead, and creates topics on them', async () => {
  const log = createLogger({ LOG_LEVEL: 'silent' });
  const admin = createKafka({ KAFKA_BROKERS: cluster.brokers, KAFKA_CLIENT_ID: 'test' }, log).admin();
  await admin.connect();
  await admin.describeCluster(); // the admin's pool now holds all three brokers
  await cluster.kill(3);
  try {
    // Each metadata request asks a broker of the pool picked at random: 20 of them all but surely
    // pick the dead one first at least once (kafkajs failed such a request with its connection error).
    for (let i = 0; i < 20; i++) await admin.listTopics();
    // Until the cluster fences it (9 s), the dead broker may be the controller a metadata answer
    // names (KRaft names a random live broker), where kafkajs sends admin requests: 20 of them, each
    // after a metadata refresh, all but surely meet it (kafkajs failed them with its connection error).
    for (let i = 0; i < 20; i++) await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: `known-1.${serviceTopics[0]!.name}` }] });
    await ensureTopics(admin, 'known-1', serviceTopics, log);
    // A new topic still gets three replicas: KRaft places one on the dead broker, in sync once it is back.
    await ensureTopics(admin, 'while-down', serviceTopics, log);
    const names = serviceTopics.map((d) => `while-down.${d.name}`);
    const replicas = (await admin.fetchTopicMetadata({ topics: names })).topics.flatMap((t) => t.partitions.map((p) => p.replicas.length));
    expect(new Set(replicas)).toEqual(new Set([3]));
  } finally {
    await cluster.restart();
    await admin.disconnect();
  }
}, 120_000);

it('starts an ingress and a worker process side by side', async () => {
  const env = { ...cluster.env, METRICS_PORT: '0', LOG_LEVEL: 'info' };
  const port = childPort();
  const ingress = startTs('src/main.ts', [], { ...env, HTTP_PORT: port });
  const workers = startTs('workers/all.ts', [], env);
  started.push(ingress, workers);
  await Promise.all([waitForOutput(ingress, 'ingress listening', 180_000), waitForOutput(workers, 'worker process ready', 180_000)]);

  expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
  // The worker process's consumers have joined their groups.
  const line = workers.output().split('\n').find((l) => l.includes('metrics listening'))!;
  const operations = JSON.parse(line).url as string;
  await eventually(async () => (await fetch(`${operations}/readyz`)).status === 200, 60_000, 500);
  expect([ingress.process.exitCode, workers.process.exitCode]).toEqual([null, null]);
}, 240_000);
