// Reads the dead-letters topic of this test run, as any consumer would.
import { Kafka, logLevel } from 'kafkajs';
import { createSchemaRegistry } from '../../src/platform/registry/schema-registry.ts';
import type { DeadLetter } from '../../src/platform/actors/dead-letter.ts';
import type { Config } from '../../src/platform/config.ts';
import { prefixed } from '../../topics/index.ts';

/** Collects dead letters (see topic-reader.ts for any topic) until `until` is satisfied or the timeout passes. */
export async function readDeadLetters(config: Config, until: (letters: DeadLetter[]) => boolean, timeoutMs = 30_000): Promise<DeadLetter[]> {
  const kafka = new Kafka({ brokers: config.KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });
  const registry = createSchemaRegistry(config.SCHEMA_REGISTRY_URL);
  const consumer = kafka.consumer({ groupId: prefixed(config.TOPIC_PREFIX, `dlq-reader-${Math.random().toString(36).slice(2)}`) });
  const letters: DeadLetter[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic: prefixed(config.TOPIC_PREFIX, 'dead-letters'), fromBeginning: true });
  try {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      void consumer.run({
        eachMessage: async ({ message }) => {
          letters.push((await registry.decode(message.value!)) as DeadLetter);
          if (until(letters)) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return letters;
}
