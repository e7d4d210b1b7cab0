// kafkajs's send (producer/sendMessages.js, patched: patches/kafkajs+2.2.4+002+acknowledged-sends.patch) retried against a
// scripted cluster: a retry sends exactly the messages no broker has acknowledged, wherever their
// partitions lead now. test/integration/platform/kafka-acknowledged-sends.test.ts shows the same on a
// real cluster with a hung broker.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const createSendMessages = require('kafkajs/src/producer/sendMessages.js');
const createRetry = require('kafkajs/src/retry');
const { createErrorFromCode } = require('kafkajs/src/protocol/error.js');

interface Message {
  value: string;
  /** Without one, messages take partitions 0 and 1 in turn (as kafkajs's partitioners treat unkeyed messages). */
  partition?: number;
}
type Produce = (partitions: number[]) => Promise<void>;

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const NOT_LEADER_OR_FOLLOWER = 6;

/**
 * A cluster whose partition leaders the test sets (and changes when the send refreshes its metadata),
 * with brokers that record what they were sent and answer as `behave` says.
 */
function scriptedCluster(leaders: Record<number, number>, behave: (nodeId: number, attempt: number) => Produce, onRefresh = () => {}) {
  const written: Record<number, string[]> = {};
  const attempts: Record<number, number> = {};
  const broker = (nodeId: number) => ({
    nodeId,
    produce: async ({ topicData }: { topicData: { topic: string; partitions: { partition: number; messages: Message[] }[] }[] }) => {
      attempts[nodeId] = (attempts[nodeId] ?? 0) + 1;
      const partitions = topicData[0]!.partitions;
      await behave(nodeId, attempts[nodeId])(partitions.map((p) => p.partition));
      for (const p of partitions) (written[p.partition] ??= []).push(...p.messages.map((m) => m.value));
      return { topics: [{ topicName: topicData[0]!.topic, partitions: partitions.map((p) => ({ partition: p.partition, errorCode: 0, baseOffset: '0' })) }] };
    },
  });
  const cluster = {
    targetTopics: new Set<string>(),
    refreshMetadataIfNecessary: async () => {},
    refreshMetadata: async () => onRefresh(),
    addMultipleTargetTopics: async () => {},
    isConnected: () => true,
    removeBroker: () => {},
    findTopicPartitionMetadata: () => Object.keys(leaders).map((p) => ({ partitionId: Number(p), leader: leaders[Number(p)] })),
    findLeaderForPartitions: (_topic: string, partitions: string[]) => {
      const result: Record<number, number[]> = {};
      for (const p of partitions.map(Number)) (result[leaders[p]!] ??= []).push(p);
      return result;
    },
    findBroker: async ({ nodeId }: { nodeId: string }) => broker(Number(nodeId)),
  };
  const eosManager = {
    acquireBrokerLock: async () => {},
    releaseBrokerLock: async () => {},
    isTransactional: () => false,
    getSequence: () => 0,
    updateSequence: () => {},
    getProducerId: () => -1,
    getProducerEpoch: () => 0,
  };
  let next = 0;
  const send = createSendMessages({
    logger: quiet,
    cluster,
    partitioner: ({ message }: { message: Message }) => message.partition ?? next++ % 2,
    eosManager,
    retrier: createRetry({ retries: 3, initialRetryTime: 1, maxRetryTime: 5 }),
  });
  return {
    written,
    send: (messages: Message[]) => send({ acks: -1, timeout: 1000, topicMessages: [{ topic: 't', messages }] }),
  };
}

const ok: Produce = async () => {};
const notLeader: Produce = async () => {
  throw createErrorFromCode(NOT_LEADER_OR_FOLLOWER);
};
const messages = [
  { value: 'a', partition: 0 },
  { value: 'b', partition: 1 },
  { value: 'c', partition: 1 },
];

describe('kafkajs send retries', () => {
  it('sends a failed broker\'s messages to the broker that answered the first attempt, once their partition moved to it (kafkajs #1303)', async () => {
    // Broker 2 loses partition 1 to broker 1, which had already written partition 0.
    const leaders: Record<number, number> = { 0: 1, 1: 2 };
    const cluster = scriptedCluster(leaders, (node) => (node === 2 ? notLeader : ok), () => (leaders[1] = 1));
    await cluster.send(messages);
    expect(cluster.written).toEqual({ 0: ['a'], 1: ['b', 'c'] });
  });

  it('waits for an attempt\'s slower requests before retrying, and does not send what they wrote again', async () => {
    const leaders: Record<number, number> = { 0: 1, 1: 2 };
    const slowOk: Produce = () => new Promise((resolve) => setTimeout(resolve, 50));
    const cluster = scriptedCluster(leaders, (node, attempt) => (node === 1 && attempt === 1 ? notLeader : node === 2 ? slowOk : ok));
    await cluster.send(messages);
    expect(cluster.written).toEqual({ 0: ['a'], 1: ['b', 'c'] });
  });

  it('sends a message given twice twice, though one of the two was written (unkeyed, they went to different partitions)', async () => {
    const twice = { value: 'x' };
    const leaders: Record<number, number> = { 0: 1, 1: 2 };
    const cluster = scriptedCluster(leaders, (node, attempt) => (node === 2 && attempt === 1 ? notLeader : ok));
    await cluster.send([twice, twice]);
    // The first went to partition 0; the second, refused on partition 1, to partition 0 on the retry.
    expect(cluster.written).toEqual({ 0: ['x', 'x'] });
  });
});
