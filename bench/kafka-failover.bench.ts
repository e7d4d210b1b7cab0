// How long publishing stalls when a broker of a three-node cluster dies or hangs (issue 41).
//
// A three-node KRaft cluster of its own (test/support/kafka-cluster.ts: replication factor 3,
// min.insync.replicas 2) and one producer made as every process makes it (createProducer), sending
// 60-message batches over a six-partition topic one after the other, so that every send has messages
// for every broker. In ROUNDS rounds each, the broker leading most partitions is
//   killed  (SIGKILL: its connections reset at once), then started again, or
//   stopped (SIGSTOP: its connections stay open and unanswered), then resumed once the others lead,
// and the run records, from the fault:
//   electedMs   when a surviving broker first names other leaders for all of its partitions;
//   firstAckMs  when the first send started after the fault resolves (every send spans every
//               partition, so the new leaders have taken the fault's partitions by then; a send
//               begun before it may have been written just before it);
//   consumedMs  when a consumer in a group (the workers' settings) first reads a message sent after
//               the fault from a partition the broker led; the broker comes back once the consumer
//               has, or after BROKER_DOWN_MS (consumedWhileDown says which);
// and every acknowledged message is read back at the end (none missing). Each round starts with every
// replica in sync. Results: bench/results/kafka-failover.json. Run: node bench/kafka-failover.bench.ts
import { createKafka } from '../src/platform/kafka/client.ts';
import { topicsAsKnownBy } from '../src/platform/kafka/broker-metadata.ts';
import { METADATA_MAX_AGE_MS } from '../src/platform/kafka/metadata-age.ts';
import { createProducer } from '../src/platform/kafka/producer.ts';
import { ensureTopics } from '../src/platform/kafka/topics.ts';
import { createLogger } from '../src/platform/logger.ts';
import { NODES, startTestCluster, type Node, type TestCluster } from '../test/support/kafka-cluster.ts';
import { medianBy, writeResult } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TOPIC = 'failover';
const PARTITIONS = 6;
const BATCH = 60;
/** How long a broker stays dead or stopped at most: until then the round waits for the consumer. */
const BROKER_DOWN_MS = 60_000;
/** A round gives up on a cluster that never recovers. */
const ROUND_TIMEOUT_MS = 180_000;

const log = createLogger({ LOG_LEVEL: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = ROUND_TIMEOUT_MS, everyMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

let cluster: TestCluster | undefined;
try {
  console.log('starting a three-node cluster…');
  cluster = await startTestCluster();
  const c = cluster;
  const kafka = createKafka({ KAFKA_BROKERS: c.brokers, KAFKA_CLIENT_ID: 'bench-failover' }, log);
  const readBack = kafka.consumer({ groupId: 'bench-failover-reader' });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, '', [{ name: TOPIC, partitions: PARTITIONS, key: 'message id', cleanupPolicy: 'delete', valueSchema: '', description: 'bench' }], log);

  const leadersSeenBy = async (node: Node) => (await topicsAsKnownBy('127.0.0.1', c.portOf(node), [TOPIC], 1000))[0]!.leaders;
  const allInSync = async () => (await admin.fetchTopicMetadata({ topics: [TOPIC] })).topics[0]!.partitions.every((p) => p.isr.length === 3 && p.leader >= 0);

  // A consumer as the workers' (runtime.ts: 28 retries, metadata at most 1 s old): each batch it reads, by partition, with its newest message's time.
  const batches: { partition: number; newest: number; at: number }[] = [];
  const consumer = kafka.consumer({ groupId: 'bench-failover-live', retry: { retries: 28 }, maxWaitTimeInMs: 100, metadataMaxAge: METADATA_MAX_AGE_MS });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: false });
  let joined = false;
  consumer.on(consumer.events.GROUP_JOIN, () => (joined = true));
  await consumer.run({ eachBatch: async ({ batch }) => {
    if (batch.messages.length === 0) return;
    batches.push({ partition: batch.partition, newest: Math.max(...batch.messages.map((m) => Number(m.timestamp))), at: Date.now() });
  } });
  await until('consumer joined', async () => joined);

  // The producer: sends one after the other until stopped; each acknowledged send's time and ids.
  const producer = createProducer(kafka);
  await producer.connect();
  const acknowledged: string[] = [];
  /** Each acknowledged send: when it started and when it resolved. */
  const acks: { startedAt: number; ackedAt: number }[] = [];
  let failedSends = 0;
  let stopping = false;
  let sends = 0;
  const startedAt = Date.now();
  const producing = (async () => {
    while (!stopping) {
      const ids = Array.from({ length: BATCH }, (_, i) => `${sends}-${i}`);
      sends++;
      const startedAt = Date.now();
      try {
        await producer.send({ topic: TOPIC, acks: -1, messages: ids.map((id) => ({ key: id, value: id })) });
        acknowledged.push(...ids);
        acks.push({ startedAt, ackedAt: Date.now() });
      } catch {
        failedSends++;
      }
    }
  })();

  const round = async (fault: 'kill' | 'stop') => {
    await until('replicas in sync', allInSync);
    await sleep(2000); // sending steadily
    const leaders = await leadersSeenBy(1);
    const led = NODES.map((n) => leaders.filter((l) => l === n).length);
    const victim = NODES[led.indexOf(Math.max(...led))]!;
    const partitions = leaders.flatMap((l, p) => (l === victim ? [p] : []));
    const observer = NODES.find((n) => n !== victim)!;
    const at = Date.now();
    if (fault === 'kill') await c.kill(victim);
    else c.pause(victim);
    const elected = until('election', async () => {
      const now = await leadersSeenBy(observer);
      return partitions.every((p) => now[p] !== victim && now[p]! >= 0) && Date.now();
    });
    const firstAck = until('first acknowledged send', async () => acks.find((a) => a.startedAt > at)?.ackedAt, ROUND_TIMEOUT_MS, 20);
    const consumedFrom = async () => batches.find((b) => partitions.includes(b.partition) && b.newest > at)?.at;
    const [electedAt, ackAt] = await Promise.all([elected, firstAck]);
    // A consumer may wait for the broker itself (its group coordinator hung, say): the broker comes
    // back after at most BROKER_DOWN_MS, and the round records whether the consumer went on before.
    const consumedBefore = await until('first message read from its partitions', consumedFrom, Math.max(0, at + BROKER_DOWN_MS - Date.now()), 20).catch(() => undefined);
    const backAt = Date.now();
    if (fault === 'kill') await c.restart();
    else c.resume(victim);
    const consumedAt = consumedBefore ?? (await until('first message read from its partitions', consumedFrom, ROUND_TIMEOUT_MS, 20));
    const result = { fault, victim, partitions: partitions.length, electedMs: electedAt - at, firstAckMs: ackAt - at, consumedMs: consumedAt - at, consumedWhileDown: consumedBefore !== undefined, downMs: backAt - at, at, firstSendAfter: sends };
    console.log(JSON.stringify(result));
    return result;
  };

  type Round = Awaited<ReturnType<typeof round>>;
  const kills: Round[] = [];
  const stops: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    kills.push(await round('kill'));
    stops.push(await round('stop'));
  }
  stopping = true;
  await producing;
  await producer.disconnect();
  await consumer.disconnect();

  // Every acknowledged message is in the topic: each partition read to its end, by offset (a batch
  // may come twice), with the partition each message is on.
  const written = new Map<string, number>();
  const ends = new Map((await admin.fetchTopicOffsets(TOPIC)).map((p) => [p.partition, BigInt(p.high)]));
  const readTo = new Map([...ends.keys()].map((p) => [p, -1n]));
  await readBack.connect();
  await readBack.subscribe({ topic: TOPIC, fromBeginning: true });
  await readBack.run({ eachBatch: async ({ batch }) => {
    for (const m of batch.messages) written.set(m.value!.toString(), batch.partition);
    const last = batch.messages.at(-1);
    if (last && BigInt(last.offset) > readTo.get(batch.partition)!) readTo.set(batch.partition, BigInt(last.offset));
  } });
  await until('read back', async () => [...ends].every(([p, end]) => readTo.get(p)! >= end - 1n), 600_000, 500);
  await readBack.disconnect();
  await admin.disconnect();
  const missingIds = acknowledged.filter((id) => !written.has(id));
  const missing = missingIds.length;
  if (missing > 0) {
    // Which sends lost messages, and when they were acknowledged against the faults (ms from the start).
    const sendOf = (id: string) => Number(id.split('-')[0]);
    const missingSends = [...new Set(missingIds.map(sendOf))];
    console.log(JSON.stringify({ missing, missingSends: missingSends.length, sends: [missingSends[0], missingSends.at(-1)], faults: [...kills, ...stops].map((r) => ({ fault: r.fault, firstSendAfter: r.firstSendAfter })) }));
  }

  const median = (values: number[]) => medianBy(values, (v) => v);
  const of = (rounds: Round[], by: (r: Round) => number) => median(rounds.map(by));
  const result = {
    benchmark: 'kafka-failover',
    cluster: 'three KRaft nodes on this machine (infra/local/stack.sh, STACK_KAFKA_NODES=3), replication factor 3, min.insync.replicas 2',
    producer: 'createProducer (src/platform/kafka/producer.ts): metadataMaxAge 1 s, retries at most 1 s apart; 60-message sends over 6 partitions, one at a time, acks=all',
    rounds: { kill: kills, stop: stops },
    medians: {
      killElectedMs: of(kills, (r) => r.electedMs),
      killFirstAckMs: of(kills, (r) => r.firstAckMs),
      stopElectedMs: of(stops, (r) => r.electedMs),
      stopFirstAckMs: of(stops, (r) => r.firstAckMs),
      killConsumedMs: of(kills, (r) => r.consumedMs),
      stopConsumedMs: of(stops, (r) => r.consumedMs),
      // What issue 41 bounds: from the election to the first acknowledged send, at most one metadata refresh (1 s).
      killAfterElectionMs: of(kills, (r) => r.firstAckMs - r.electedMs),
      stopAfterElectionMs: of(stops, (r) => r.firstAckMs - r.electedMs),
    },
    messages: { acknowledged: acknowledged.length, written: written.size, missing, failedSends },
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('kafka-failover', result);
} finally {
  await cluster?.release();
}
