// What a run leaves in the shared broker and registry is found and deleted:
// topics, consumer groups, and registry subjects (active or already soft-deleted).
// The run's teardown (test/global-setup.ts) relies on this for the whole run's prefix.
import { describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { deleteOwned, ownedLeftovers, underPrefix } from '../../support/kafka-leftovers.ts';
import { testConfig } from '../../support/env.ts';
import { ensureTopics } from '../../../src/platform/kafka/topics.ts';
import { createLogger } from '../../../src/platform/logger.ts';
import { probeTopic } from '../../fixtures/probe-topics.ts';
import { kafkaSecurity } from '../../../src/platform/kafka/security.ts';

const config = testConfig();
const services = config;
const prefix = `${config.TOPIC_PREFIX}.made`;
const schema = (field: string) => JSON.stringify({ schema: JSON.stringify({ type: 'record', name: 'Leftover', fields: [{ name: field, type: 'string' }] }) });

async function register(subject: string, field: string): Promise<void> {
  const res = await fetch(`${config.SCHEMA_REGISTRY_URL}/subjects/${subject}/versions`, { method: 'POST', headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' }, body: schema(field) });
  expect(res.status).toBe(200);
}

describe('kafka leftovers', () => {
  it('deletes the topics, consumer groups and subjects under a prefix, and nothing outside it', async () => {
    const kafka = new Kafka({ brokers: config.KAFKA_BROKERS.split(','), ...kafkaSecurity(config), logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      // As the service creates its topics: they are served when this returns (a send right after
      // createTopics can meet a broker that does not host the topic yet).
      await ensureTopics(admin, config.TOPIC_PREFIX, [probeTopic('made.events', 1), probeTopic('made-other.events', 1)], createLogger(config, 'test'), kafkaSecurity(config));
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic: `${prefix}.events`, messages: [{ value: 'x' }] });
      await producer.disconnect();
      // A group that committed an offset and left: what a stopped worker leaves behind.
      const consumer = kafka.consumer({ groupId: `${prefix}.sink` });
      await consumer.connect();
      await consumer.subscribe({ topic: `${prefix}.events`, fromBeginning: true });
      let read = false;
      await consumer.run({ eachMessage: async () => void (read = true) });
      while (!read) await new Promise((r) => setTimeout(r, 100));
      await consumer.disconnect();
      await register(`${prefix}.events-value`, 'a');
      // Soft-deleted by a run that stopped half-way: listed only with ?deleted=true.
      await register(`${prefix}.old-value`, 'b');
      await fetch(`${config.SCHEMA_REGISTRY_URL}/subjects/${prefix}.old-value`, { method: 'DELETE' });

      expect((await ownedLeftovers(services, underPrefix(prefix))).sort()).toEqual(
        [`consumer group ${prefix}.sink`, `registry subject ${prefix}.events-value`, `registry subject ${prefix}.old-value`, `topic ${prefix}.events`].sort(),
      );
      await deleteOwned(services, underPrefix(prefix));
      expect(await ownedLeftovers(services, underPrefix(prefix))).toEqual([]);
      // A name that only starts like the prefix is someone else's.
      expect(await admin.listTopics()).toContain(`${prefix}-other.events`);
    } finally {
      await admin.deleteTopics({ topics: [`${prefix}-other.events`] }).catch(() => {});
      await admin.disconnect();
    }
  });
});
