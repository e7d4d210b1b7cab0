// Avro values in the Confluent wire format (magic byte, 4-byte schema id, Avro
// body), with schemas registered in the Schema Registry under the topic's
// `<topic>-value` subject. Any consumer with a registry client decodes them.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { prefixed, type TopicDefinition } from '../kafka/topic-definition.ts';

export const SCHEMAS_DIR = fileURLToPath(new URL('../../../schemas', import.meta.url));

export function createSchemaRegistry(url: string): SchemaRegistry {
  return new SchemaRegistry({ host: url, retry: { retries: 3 } });
}

/** Encodes one topic's values with its registered schema id. */
export class TopicCodec<T> {
  private type: { toBuffer(value: unknown): Buffer } | undefined;
  private readonly header: Buffer;

  constructor(
    private readonly registry: SchemaRegistry,
    readonly topic: string,
    readonly schemaId: number,
  ) {
    // Confluent wire format: magic byte 0, then the schema id as a 4-byte big-endian integer.
    this.header = Buffer.alloc(5);
    this.header.writeInt32BE(schemaId, 1);
  }

  async encode(value: T): Promise<Buffer> {
    this.type ??= (await this.registry.getSchema(this.schemaId)) as unknown as { toBuffer(value: unknown): Buffer };
    try {
      // Encoded here with the cached Avro type: no promise per value on the hot path.
      return Buffer.concat([this.header, this.type.toBuffer(value)]);
    } catch {
      // The library's encoder says which fields do not fit.
      return this.registry.encode(this.schemaId, value);
    }
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
