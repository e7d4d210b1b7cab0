// A record produced through the platform is decoded by a plain consumer that
// uses nothing but the registry's HTTP API and an Avro library, as a data team would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import avro from 'avsc';
import { Kafka, logLevel } from 'kafkajs';
import { startPlatform, type Platform } from '../../../src/platform/platform.ts';
import { prefixed } from '../../../src/platform/kafka/topic-definition.ts';
import { deadLettersTopic } from '../../../src/platform/actors/dead-letters-topic.ts';
import { probeTopic, type Probe } from '../../fixtures/probe-topics.ts';
import { testConfig } from '../../support/env.ts';
import { kafkaSecurity } from '../../../src/platform/kafka/security.ts';

const topicDef = probeTopic('probe.registry', 1);
let platform: Platform;

beforeAll(async () => {
  platform = await startPlatform(testConfig(), { name: 'test', topics: [topicDef, deadLettersTopic], migrate: false });
});
afterAll(async () => {
  await platform?.shutdown.run('test done');
});

describe('Avro values in the Confluent wire format', () => {
  it('are decoded by a plain consumer with only the registry', async () => {
    const config = platform.config;
    const sent: Probe = { id: 'p-1', seq: 7, text: "quote ' backslash \\ unicode 世界 🎉", amount: 19.99, at: Date.UTC(2026, 10, 22, 12, 0, 0) };
    await platform.publisher.publish(topicDef, [{ key: 'actor-1', value: sent }]);

    // A data team's consumer: kafkajs + fetch + avsc, no code of ours.
    const kafka = new Kafka({ brokers: config.KAFKA_BROKERS.split(','), ...kafkaSecurity(config), logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: prefixed(config.TOPIC_PREFIX, 'data-team') });
    await consumer.connect();
    await consumer.subscribe({ topic: prefixed(config.TOPIC_PREFIX, topicDef.name), fromBeginning: true });
    const raw = await new Promise<{ key: string; value: Buffer }>((resolve) => {
      void consumer.run({ eachMessage: async ({ message }) => resolve({ key: message.key!.toString(), value: message.value! }) });
    });
    await consumer.disconnect();

    expect(raw.key).toBe('actor-1');
    expect(raw.value[0]).toBe(0); // magic byte
    const schemaId = raw.value.readInt32BE(1);
    const res = await fetch(`${config.SCHEMA_REGISTRY_URL}/schemas/ids/${schemaId}`);
    expect(res.status).toBe(200);
    const { schema } = (await res.json()) as { schema: string };
    const type = avro.Type.forSchema(JSON.parse(schema));
    expect(type.fromBuffer(raw.value.subarray(5))).toEqual(sent);

    // The subject follows the topic name strategy.
    const versions = await fetch(`${config.SCHEMA_REGISTRY_URL}/subjects/${prefixed(config.TOPIC_PREFIX, topicDef.name)}-value/versions`);
    expect(versions.status).toBe(200);
  });

  it('encodes a batch into shared buffers that each decode to their own value', async () => {
    const codec = platform.publisher.codec<Probe>(topicDef);
    const { schema } = (await (await fetch(`${platform.config.SCHEMA_REGISTRY_URL}/schemas/ids/${codec.schemaId}`)).json()) as { schema: string };
    const type = avro.Type.forSchema(JSON.parse(schema));
    // Sizes around and far past a value's share of a slab (1 KiB) and a whole slab (256 KiB).
    const sizes = [0, 10, 1000, 1019, 1024, 5000, 100, 300_000, 7, 200_000, 60_000, 1, 900];
    for (const count of [1, 3, 13, 400]) {
      const values: Probe[] = Array.from({ length: count }, (_, i) => ({
        id: `p-${i}`,
        seq: i,
        text: 'é'.repeat(sizes[i % sizes.length]!) + String(i),
        amount: i / 3,
        at: Date.UTC(2026, 10, 26) + i,
      }));
      const encoded = await codec.encodeAll(values);
      expect(encoded).toHaveLength(count);
      encoded.forEach((buf, i) => {
        expect(buf[0]).toBe(0);
        expect(buf.readInt32BE(1)).toBe(codec.schemaId);
        expect(type.fromBuffer(buf.subarray(5))).toEqual(values[i]);
      });
    }
  });

  it('refuses to publish a value that does not fit the schema', async () => {
    await expect(
      platform.publisher.publish(topicDef, [{ key: 'k', value: { id: 'x', seq: 'not a number' } as unknown as Probe }]),
    ).rejects.toThrow();
  });

  it('registers the same schema idempotently and the registry enforces backward compatibility', async () => {
    const subject = `${prefixed(platform.config.TOPIC_PREFIX, topicDef.name)}-value`;
    const url = `${platform.config.SCHEMA_REGISTRY_URL}/subjects/${subject}/versions`;
    const first = platform.publisher.codec(topicDef).schemaId;
    await platform.publisher.register([topicDef]);
    const again = await (await import('../../../src/platform/registry/schema-registry.ts')).registerTopicSchema(platform.registry, platform.config.TOPIC_PREFIX, topicDef);
    expect(again.schemaId).toBe(first);

    // A new required field without a default breaks old data: refused.
    const original = JSON.parse((await (await fetch(`${platform.config.SCHEMA_REGISTRY_URL}/schemas/ids/${first}`)).json()).schema);
    const breaking = { ...original, fields: [...original.fields, { name: 'mandatory', type: 'string' }] };
    const refused = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ schema: JSON.stringify(breaking) }),
    });
    expect(refused.status).toBe(409);

    // An optional field with a default is a backward-compatible evolution: accepted.
    const compatible = { ...original, fields: [...original.fields, { name: 'optional', type: ['null', 'string'], default: null }] };
    const accepted = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ schema: JSON.stringify(compatible) }),
    });
    expect(accepted.status).toBe(200);
  });
});
