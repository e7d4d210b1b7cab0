// A probe topic of a test's own holding one message, made as the service makes its topics (ensureTopics
// returns once every broker serves it: a send right after createTopics could meet one that did not).
import { Kafka, logLevel, type Admin } from 'kafkajs';
import type { Config } from '../../src/platform/config.ts';
import { ensureTopics } from '../../src/platform/kafka/topics.ts';
import { kafkaSecurity } from '../../src/platform/kafka/security.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { probeTopic } from '../fixtures/probe-topics.ts';

/** A kafkajs client connected as the run's processes are, its admin (connected: the caller disconnects it) and the topic's full name. */
export async function topicWithOneMessage(config: Config, name: string): Promise<{ kafka: Kafka; admin: Admin; topic: string }> {
  const kafka = new Kafka({ brokers: config.KAFKA_BROKERS.split(','), ...kafkaSecurity(config), logLevel: logLevel.NOTHING });
  const definition = probeTopic(name, 1);
  const topic = `${config.TOPIC_PREFIX}.${definition.name}`;
  const admin = kafka.admin();
  await admin.connect();
  try {
    await ensureTopics(admin, config.TOPIC_PREFIX, [definition], createLogger(config, 'test'), kafkaSecurity(config));
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: [{ value: 'x' }] });
    await producer.disconnect();
  } catch (err) {
    await admin.disconnect();
    throw err;
  }
  return { kafka, admin, topic };
}
