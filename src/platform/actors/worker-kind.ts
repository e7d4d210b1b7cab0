// A worker kind is a consumer group. Each message key names one actor; the
// runtime hands an actor its messages one at a time, in partition order.
import type { IHeaders } from 'kafkajs';
import type { Registry } from 'prom-client';
import type { TopicDefinition } from '../kafka/topic-definition.ts';

export interface ActorMessage<V> {
  topic: string;
  partition: number;
  offset: string;
  /** The actor this message belongs to. */
  key: string;
  value: V;
  timestamp: number;
  headers: IHeaders;
}

export interface Actor<S> {
  key: string;
  /** Loaded by `loadState` when the key is first seen after its partition was assigned; the handler may mutate it. */
  state: S;
}

interface WorkerKindBase<S> {
  /** Consumer group name (the deployment's TOPIC_PREFIX is added). */
  kind: string;
  topics: readonly TopicDefinition[];
  /** Loads an actor's durable state (from Postgres or a compacted topic) on first use after assignment. */
  loadState?: (key: string) => Promise<S>;
  /** Partitions processed at once; messages of one key are never processed concurrently. */
  concurrency?: number;
  /** Attempts per message before it goes to the dead-letter topic (default ACTOR_MAX_ATTEMPTS). */
  maxAttempts?: number;
  /** First retry delay; doubles per attempt (default ACTOR_RETRY_BASE_MS). */
  retryBaseMs?: number;
  /** Start from the earliest offset when the group has none (default true: nothing published is skipped). */
  fromBeginning?: boolean;
  /** Work the kind runs beside its consumer (a scheduler), started before it and stopped after it. */
  background?: BackgroundTask;
  /**
   * How the broker gathers a fetch: it answers once `minBytes` are there or `maxWaitTimeInMs` has
   * passed (the runtime's defaults: 1 byte, 1 s). A kind whose cost is per batch (a transaction, an
   * insert) asks for fuller fetches, trading that wait in freshness for fewer, larger batches, and
   * may let them grow past kafkajs's 1 MiB a partition and 10 MiB a fetch.
   */
  fetch?: { minBytes: number; maxWaitTimeInMs: number; maxBytesPerPartition?: number; maxBytes?: number };
  /** Gauges of the kind's own read when its process is scraped (a queue's depth), added to that process's /metrics. */
  scrapeGauges?: (registry: Registry) => void;
}

/** What a kind can see of a message without decoding its value. */
export interface MessageEnvelope {
  key: string;
  headers: IHeaders;
}

export interface BackgroundTask {
  start: () => void;
  /** Resolves when in-flight work is finished. */
  stop: () => Promise<void>;
}

/** Handles one message at a time. Must be idempotent; resolves only when its effect is durable. */
export interface MessageWorkerKind<V, S> extends WorkerKindBase<S> {
  handle: (message: ActorMessage<V>, actor: Actor<S>) => Promise<void>;
}

/** Handles a partition's batch at once (sinks). Must be idempotent; resolves only when the batch is durable. */
export interface BatchWorkerKind<V> extends WorkerKindBase<never> {
  handleBatch: (messages: ActorMessage<V>[]) => Promise<void>;
  /**
   * Which of a batch's messages the kind handles, told from keys and headers alone; the others
   * are neither decoded nor handed to handleBatch (their offsets are committed all the same).
   * Without it, every message is handled.
   */
  select?: (messages: readonly MessageEnvelope[]) => Promise<boolean[]>;
}

export type WorkerKind<V = any, S = any> = MessageWorkerKind<V, S> | BatchWorkerKind<V>;

export function isBatchKind<V>(kind: WorkerKind<V>): kind is BatchWorkerKind<V> {
  return 'handleBatch' in kind;
}
