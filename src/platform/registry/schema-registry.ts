// Avro values in the Confluent wire format (magic byte, 4-byte schema id, Avro
// body), with schemas registered in the Schema Registry under the topic's
// `<topic>-value` subject. Any consumer with a registry client decodes them.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { prefixed, type TopicDefinition } from '../kafka/topic-definition.ts';
import { registryConnection, type RegistrySettings } from './registry-connection.ts';

export const SCHEMAS_DIR = fileURLToPath(new URL('../../../schemas', import.meta.url));

export function createSchemaRegistry(settings: RegistrySettings): SchemaRegistry {
  const { url, auth, agent } = registryConnection(settings);
  return new SchemaRegistry({ host: url, ...(auth ? { auth } : {}), agent, retry: { retries: 3 } });
}

interface AvroType {
  toBuffer(value: unknown): Buffer;
  /** Writes at pos; returns the end, or a negative number when the buffer is too small. */
  encode(value: unknown, buf: Buffer, pos: number): number;
}

// A batch is encoded into shared slabs sized to it: about this much per value, at most MAX_SLAB.
const BYTES_PER_VALUE = 1024;
const MAX_SLAB = 256 * 1024;
const HEADER_BYTES = 5;

/** Encodes one topic's values with its registered schema id. */
export class TopicCodec<T> {
  private readonly registry: SchemaRegistry;
  readonly topic: string;
  readonly schemaId: number;
  private type: AvroType | undefined;
  private readonly header: Buffer;

  constructor(
    registry: SchemaRegistry,
    topic: string,
    schemaId: number,
  ) {
    this.registry = registry;
    this.topic = topic;
    this.schemaId = schemaId;
    // Confluent wire format: magic byte 0, then the schema id as a 4-byte big-endian integer.
    this.header = Buffer.alloc(HEADER_BYTES);
    this.header.writeInt32BE(schemaId, 1);
  }

  /**
   * Encodes a batch of values, in order. They are written with the cached Avro type into a few
   * shared buffers, synchronously: no promise and no two buffers per value on the hot path.
   */
  async encodeAll(values: readonly T[]): Promise<Buffer[]> {
    const type = (this.type ??= (await this.registry.getSchema(this.schemaId)) as unknown as AvroType);
    const out: Buffer[] = new Array(values.length);
    let slab = Buffer.allocUnsafe(Math.min(values.length * BYTES_PER_VALUE, MAX_SLAB));
    let pos = 0;
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      let end: number;
      try {
        end = this.write(type, value, slab, pos);
        if (end < 0 && pos > 0) {
          // The slab is full: a fresh one for the rest of the batch.
          slab = Buffer.allocUnsafe(Math.min((values.length - i) * BYTES_PER_VALUE, MAX_SLAB));
          pos = 0;
          end = this.write(type, value, slab, pos);
        }
        if (end < 0) {
          // Larger than a slab: a buffer of its own.
          out[i] = Buffer.concat([this.header, type.toBuffer(value)]);
          continue;
        }
      } catch {
        // Not valid for the schema: the library's encoder says which fields do not fit.
        out[i] = await this.registry.encode(this.schemaId, value);
        continue;
      }
      out[i] = slab.subarray(pos, end);
      pos = end;
    }
    return out;
  }

  private write(type: AvroType, value: unknown, slab: Buffer, pos: number): number {
    if (slab.length - pos <= HEADER_BYTES) return -1;
    this.header.copy(slab, pos);
    return type.encode(value, slab, pos + HEADER_BYTES);
  }
}

export async function loadSchema(file: string): Promise<string> {
  // Relative names are files in schemas/; an absolute path is used as it is (test fixtures).
  return readFile(resolve(SCHEMAS_DIR, file), 'utf8');
}

/**
 * Registers the topic's value schema (idempotent: the same schema gets the same id)
 * and returns a codec for it. Subjects are BACKWARD compatible, so the registry
 * refuses an evolution that would break existing consumers.
 */
export async function registerTopicSchema<T>(registry: SchemaRegistry, prefix: string, def: TopicDefinition): Promise<TopicCodec<T>> {
  const topic = prefixed(prefix, def.name);
  const schema = await loadSchema(def.valueSchema);
  const register = () => registry.register({ type: SchemaType.AVRO, schema }, { subject: `${topic}-value`, compatibility: COMPATIBILITY.BACKWARD });
  // Two processes registering a new subject at once race on creating its compatibility rule: the
  // loser is refused ("already exists"), or reads the subject before the rule is set (NONE instead
  // of BACKWARD). Either way the winner finishes in a moment, and a later try succeeds.
  for (let attempt = 1; ; attempt++) {
    try {
      const { id } = await register();
      return new TopicCodec<T>(registry, topic, id);
    } catch (err) {
      const race = /already exists|Compatibility does not match the configuration \(BACKWARD != NONE\)/i.test((err as Error).message);
      if (!race || attempt >= 5) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}
