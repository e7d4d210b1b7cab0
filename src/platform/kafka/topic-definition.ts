// What a topic is, as code: its name, partitions, what its key names (the
// actor), how it is cleaned up and which Avro schema its values follow.
// Topics are created idempotently at start from these definitions.

export interface TopicDefinition {
  /** Topic name without the deployment's TOPIC_PREFIX. */
  readonly name: string;
  readonly partitions: number;
  /** What the message key names: the actor that owns the message. */
  readonly key: string;
  readonly cleanupPolicy: 'delete' | 'compact';
  /** Retention for `delete` topics; undefined keeps the broker default. */
  readonly retentionMs?: number;
  /** The largest batch of messages the topic takes (max.message.bytes); undefined keeps the broker's 1 MB. */
  readonly maxMessageBytes?: number;
  /** File name of the value's Avro schema in schemas/ (or an absolute path). */
  readonly valueSchema: string;
  readonly description: string;
}

/** The name of a topic (or consumer group) in a deployment with the given prefix. */
export function prefixed(prefix: string, name: string): string {
  return prefix ? `${prefix}.${name}` : name;
}
