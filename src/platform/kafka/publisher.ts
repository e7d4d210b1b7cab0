// Publishes Avro-encoded values to platform topics. Each topic's schema is
// registered once at start; publishing then only encodes and sends.
import type { Producer, IHeaders } from 'kafkajs';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { registerTopicSchema, type TopicCodec } from '../registry/schema-registry.ts';
import type { TopicDefinition } from './topic-definition.ts';

export interface OutgoingMessage<T> {
  key: string;
  value: T;
  headers?: IHeaders;
}

export class Publisher {
  private readonly producer: Producer;
  private readonly registry: SchemaRegistry;
  private readonly prefix: string;
  private readonly codecs = new Map<string, TopicCodec<unknown>>();

  constructor(
    producer: Producer,
    registry: SchemaRegistry,
    prefix: string,
  ) {
    this.producer = producer;
    this.registry = registry;
    this.prefix = prefix;
  }

  /** Registers the value schemas of these topics; must run before publishing to them. */
  async register(defs: readonly TopicDefinition[]): Promise<void> {
    for (const def of defs) {
      if (!this.codecs.has(def.name)) this.codecs.set(def.name, await registerTopicSchema(this.registry, this.prefix, def));
    }
  }

  codec<T>(def: TopicDefinition): TopicCodec<T> {
    const codec = this.codecs.get(def.name);
    if (!codec) throw new Error(`topic ${def.name} has no registered schema; call register() at start`);
    return codec as TopicCodec<T>;
  }

  /** Encodes and sends messages; resolves once the broker has acknowledged them (acks=all). */
  async publish<T>(def: TopicDefinition, messages: readonly OutgoingMessage<T>[]): Promise<void> {
    if (messages.length === 0) return;
    const codec = this.codec<T>(def);
    const values = await codec.encodeAll(messages.map((m) => m.value));
    const encoded = messages.map((m, i) => ({ key: m.key, value: values[i]!, headers: m.headers }));
    if (def.maxMessageBytes === undefined) {
      await this.producer.send({ topic: codec.topic, acks: -1, messages: encoded });
      return;
    }
    // A topic of large values takes at most max.message.bytes in one partition's batch: they go in
    // several sends, one after another (so a key's messages keep their order).
    for (const chunk of byBytes(encoded, def.maxMessageBytes - BATCH_OVERHEAD_BYTES)) {
      await this.producer.send({ topic: codec.topic, acks: -1, messages: chunk });
    }
  }
}

/** Room for the batch's and each record's headers within max.message.bytes. */
const BATCH_OVERHEAD_BYTES = 64 * 1024;

/** Consecutive runs of messages whose keys and values together stay within `budget` bytes (a larger one alone). */
function* byBytes<M extends { key: string | Buffer | null; value: Buffer }>(messages: readonly M[], budget: number): Generator<M[]> {
  let chunk: M[] = [];
  let bytes = 0;
  for (const m of messages) {
    const size = m.value.length + (m.key ? Buffer.byteLength(m.key) : 0);
    if (chunk.length > 0 && bytes + size > budget) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(m);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}
