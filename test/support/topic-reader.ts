// Reads a topic of this test run from the beginning, decoding values through the registry, as a data team would.
import { Kafka, logLevel } from 'kafkajs';
import { createSchemaRegistry } from '../../src/platform/registry/schema-registry.ts';
import type { Config } from '../../src/platform/config.ts';
import { prefixed } from '../../src/platform/kafka/topic-definition.ts';
import { kafkaSecurity } from '../../src/platform/kafka/security.ts';

export interface ReadMessage<T> {
  key: string;
  value: T;
  partition: number;
  offset: string;
}

/** Collects messages until `until` holds or the timeout passes; returns what was read. */
export async function readTopic<T>(config: Config, topic: string, until: (messages: ReadMessage<T>[]) => boolean, timeoutMs = 20_000): Promise<ReadMessage<T>[]> {
  const kafka = new Kafka({ brokers: config.KAFKA_BROKERS.split(','), ...kafkaSecurity(config), logLevel: logLevel.NOTHING });
  const registry = createSchemaRegistry(config);
  const consumer = kafka.consumer({ groupId: prefixed(config.TOPIC_PREFIX, `reader-${Math.random().toString(36).slice(2)}`) });
  const messages: ReadMessage<T>[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic: prefixed(config.TOPIC_PREFIX, topic), fromBeginning: true });
  try {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      void consumer.run({
        eachMessage: async ({ message, partition }) => {
          if (!message.value) return;
          messages.push({ key: message.key?.toString() ?? '', value: (await registry.decode(message.value)) as T, partition, offset: message.offset });
          if (until(messages)) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return messages;
}
