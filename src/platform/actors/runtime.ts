// Runs a worker kind: one kafkajs consumer in the kind's group. Per partition,
// messages are handled in order; an offset is resolved (and so committed) only
// after the handler resolved, i.e. after its effect is durable, or after the
// message was written to the dead-letter topic. A crash therefore replays
// messages, never skips them; handlers are idempotent so replays do no harm.
//
// Failures: an outage of a dependency (isTransient) is retried until it ends,
// with backoff capped at 30 s, holding the partition; any other error is retried
// ACTOR_MAX_ATTEMPTS times and then the message is dead-lettered. While a
// handler runs, the consumer keeps heartbeating so a slow handler does not lose
// its partitions.
import type { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { Kafka } from 'kafkajs';
import { deadLettersTopic } from './dead-letters-topic.ts';
import { prefixed } from '../kafka/topic-definition.ts';
import { METADATA_MAX_AGE_MS } from '../kafka/metadata-age.ts';
import type { Logger } from '../logger.ts';
import type { Publisher } from '../kafka/publisher.ts';
import { backoffDelay, sleepWithHeartbeat } from './backoff.ts';
import { KeyedQueue } from './keyed-queue.ts';
import { isTransient } from './transient.ts';
import { isBatchKind, type ActorMessage, type WorkerKind } from './worker-kind.ts';
import type { DeadLetter } from './dead-letter.ts';
import { deadLetters, handlerDuration, handlerRetries } from '../metrics/series.ts';

/** How long an idle fetch waits on the broker for data (kafkajs waits 5 s by default). */
const IDLE_FETCH_WAIT_MS = 1000;

export interface RuntimeDeps {
  kafka: Kafka;
  registry: SchemaRegistry;
  publisher: Publisher;
  log: Logger;
  topicPrefix: string;
  defaultMaxAttempts: number;
  defaultRetryBaseMs: number;
  /** The consumer group's session timeout (ACTOR_SESSION_TIMEOUT_MS). */
  sessionTimeoutMs: number;
  /** Called once when the consumer crashed and kafkajs will not restart it (the kind has stopped for good). */
  onFailed?: (group: string, error: Error) => void;
}

class StopRequested extends Error {}

export class WorkerRuntime<V, S> {
  private readonly deps: RuntimeDeps;
  private readonly kind: WorkerKind<V, S>;
  private consumer: Consumer | undefined;
  private readonly queue = new KeyedQueue();
  /** Loaded actor state, by key, with the partitions the key was seen on (to drop it on revocation). */
  private readonly actors = new Map<string, { state: S; partitions: Set<string> }>();
  private readonly log: Logger;
  private readonly maxAttempts: number;
  private readonly retryBaseMs: number;
  /** A third of the session timeout, at most 3 s: a lost heartbeat or two do not cost the partitions. */
  private readonly heartbeatMs: number;
  readonly group: string;
  /** The partitions this member was last given (null until it joined its group): for /readyz. */
  assignment: Record<string, number[]> | null = null;
  /** Why the consumer stopped for good (a crash kafkajs does not restart from); null while it runs. */
  failed: string | null = null;
  private stopping = false;

  constructor(deps: RuntimeDeps, kind: WorkerKind<V, S>) {
    this.deps = deps;
    this.kind = kind;
    this.group = prefixed(deps.topicPrefix, kind.kind);
    this.log = deps.log.child({ worker: kind.kind });
    this.maxAttempts = kind.maxAttempts ?? deps.defaultMaxAttempts;
    this.retryBaseMs = kind.retryBaseMs ?? deps.defaultRetryBaseMs;
    this.heartbeatMs = Math.min(3000, Math.floor(deps.sessionTimeoutMs / 3));
  }

  /** The topics the kind consumes, as named on the broker. */
  get topicNames(): string[] {
    return this.kind.topics.map((t) => prefixed(this.deps.topicPrefix, t.name));
  }

  async start(): Promise<void> {
    await this.deps.publisher.register([deadLettersTopic]);
    const consumer = this.deps.kafka.consumer({
      groupId: this.group,
      allowAutoTopicCreation: false,
      // A dead or hung leader's partitions are fetched from their new leaders within a second of the election.
      metadataMaxAge: METADATA_MAX_AGE_MS,
      sessionTimeout: this.deps.sessionTimeoutMs,
      heartbeatInterval: this.heartbeatMs,
      // Waits of at most 5 s (createKafka): 28 retries ride out a broker away for about two minutes.
      retry: { retries: 28 },
      // An idle fetch waits at most this long for data; a stop waits for the fetch in flight, so
      // kafkajs's 5 s default made every stop, shutdown and rebalance of an idle worker 5 s long.
      maxWaitTimeInMs: IDLE_FETCH_WAIT_MS,
      ...(this.kind.fetch ?? {}),
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, (event) => this.onAssignment(event.payload.memberAssignment));
    consumer.on(consumer.events.CRASH, (event) => {
      // A crash kafkajs restarts (a broker away, say) is a warning; one it does not, an error.
      this.log[event.payload.restart ? 'warn' : 'error']({ err: event.payload.error, restart: event.payload.restart }, 'consumer crashed');
      // A retriable crash is restarted by kafkajs itself; any other leaves the consumer stopped for good.
      if (event.payload.restart || this.stopping || this.failed !== null) return;
      const error = event.payload.error;
      this.failed = `${error.name}: ${error.message}`;
      this.assignment = null;
      this.deps.onFailed?.(this.group, error);
    });
    await consumer.connect();
    await consumer.subscribe({
      topics: this.topicNames,
      fromBeginning: this.kind.fromBeginning ?? true,
    });
    await consumer.run({
      autoCommit: true,
      // Resolved offsets are committed at least every second within long batches, and after each batch.
      autoCommitInterval: 1000,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.kind.concurrency ?? 3,
      eachBatch: (payload) => this.onBatch(payload),
    });
    this.log.info({ group: this.group, topics: this.kind.topics.map((t) => t.name) }, 'worker started');
  }

  /** Stops fetching, lets the batch in hand finish (or abort between messages), commits resolved offsets. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.consumer?.disconnect();
    this.consumer = undefined;
  }

  /** Drops state of actors whose partitions this member no longer owns. */
  private onAssignment(assignment: Record<string, number[]>): void {
    this.assignment = assignment;
    const owned = new Set(Object.entries(assignment).flatMap(([topic, parts]) => parts.map((p) => `${topic}:${p}`)));
    for (const [key, actor] of this.actors) {
      if ([...actor.partitions].some((p) => !owned.has(p))) this.actors.delete(key);
    }
    this.log.info({ assignment }, 'partitions assigned');
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    // isRunning turns false on stop; isStale when a seek replaced this batch. A rebalance shows up as
    // heartbeat() throwing, which ends the batch with its unresolved offsets left for the new owner.
    const stillRunning = () => payload.isRunning() && !payload.isStale();
    try {
      if (isBatchKind(this.kind)) {
        await this.handleAsBatch(payload, stillRunning);
      } else {
        for (const raw of batch.messages) {
          if (!stillRunning()) break;
          if (!raw.value) {
            // A tombstone (deletion marker of a compacted topic) has nothing to handle.
            payload.resolveOffset(raw.offset);
            continue;
          }
          await this.queue.run(raw.key?.toString() ?? '', () => this.handleOne(batch.topic, batch.partition, raw, payload, stillRunning));
          payload.resolveOffset(raw.offset);
          await payload.commitOffsetsIfNecessary();
          await payload.heartbeat();
        }
      }
    } catch (err) {
      // A stop or rebalance in the middle of a retry: leave the offset unresolved, so it is replayed.
      if (!(err instanceof StopRequested)) throw err;
    }
  }

  private async handleAsBatch(payload: EachBatchPayload, stillRunning: () => boolean): Promise<void> {
    const kind = this.kind as Extract<WorkerKind<V, S>, { handleBatch: unknown }>;
    const { batch } = payload;
    const decoded: ActorMessage<V>[] = [];
    const present = batch.messages.filter((raw) => raw.value); // not tombstones
    const picked = await this.select(present, payload, stillRunning);
    for (const [i, raw] of present.entries()) {
      if (!picked[i]) continue;
      // Tried once bare (a retry loop per message costs a heartbeat timer each); a failure goes through the retries.
      const message = await this.decode(batch.topic, batch.partition, raw).catch(() =>
        this.withRetries(batch.topic, batch.partition, raw, payload, stillRunning, () => this.decode(batch.topic, batch.partition, raw)));
      if (message) decoded.push(message);
    }
    if (decoded.length > 0) {
      const whole = await this.attempt(() => kind.handleBatch(decoded), payload, stillRunning);
      if (!whole.ok) {
        // The batch keeps failing: handle message by message, so only the bad ones are dead-lettered.
        for (const message of decoded) {
          const raw = batch.messages.find((m) => m.offset === message.offset)!;
          await this.withRetries(batch.topic, batch.partition, raw, payload, stillRunning, () => kind.handleBatch([message]));
        }
      }
    }
    const last = batch.messages.at(-1);
    if (last) payload.resolveOffset(last.offset);
  }

  /**
   * The messages the kind selects (all, if it has no select). A select that keeps failing for
   * another reason than an outage selects all: handleBatch then decides, and dead-letters what it
   * cannot handle.
   */
  private async select(messages: KafkaMessage[], payload: EachBatchPayload, stillRunning: () => boolean): Promise<boolean[]> {
    const kind = this.kind as Extract<WorkerKind<V, S>, { handleBatch: unknown }>;
    if (!kind.select || messages.length === 0) return messages.map(() => true);
    const select = kind.select;
    let picked: boolean[] = [];
    const result = await this.attempt(async () => {
      picked = await select(messages.map((raw) => ({ key: raw.key?.toString() ?? '', headers: raw.headers ?? {} })));
      // An answer that does not say yes or no for every message would skip (and commit) messages silently.
      if (!Array.isArray(picked) || picked.length !== messages.length) throw new Error(`select answered for ${Array.isArray(picked) ? picked.length : 'no'} of ${messages.length} messages`);
    }, payload, stillRunning);
    if (result.ok) return picked;
    this.log.error({ err: result.error }, 'selecting messages failed; handling all of the batch');
    return messages.map(() => true);
  }

  private async handleOne(topic: string, partition: number, raw: KafkaMessage, payload: EachBatchPayload, stillRunning: () => boolean): Promise<void> {
    const kind = this.kind as Extract<WorkerKind<V, S>, { handle: unknown }>;
    await this.withRetries(topic, partition, raw, payload, stillRunning, async () => {
      const message = await this.decode(topic, partition, raw);
      const state = await this.actorState(message.key, `${topic}:${partition}`);
      try {
        await kind.handle(message, { key: message.key, state });
      } catch (err) {
        // The handler may have changed the state before failing: reload it from the durable store next time.
        this.actors.delete(message.key);
        throw err;
      }
    });
  }

  private async actorState(key: string, partition: string): Promise<S> {
    let actor = this.actors.get(key);
    if (!actor) {
      const state = this.kind.loadState ? await this.kind.loadState(key) : (undefined as S);
      actor = { state, partitions: new Set() };
      this.actors.set(key, actor);
    }
    actor.partitions.add(partition);
    return actor.state;
  }

  private async decode(topic: string, partition: number, raw: KafkaMessage): Promise<ActorMessage<V>> {
    if (!raw.value) throw new Error('message has no value (tombstone)');
    return {
      topic,
      partition,
      offset: raw.offset,
      key: raw.key?.toString() ?? '',
      value: (await this.deps.registry.decode(raw.value)) as V,
      timestamp: Number(raw.timestamp),
      headers: raw.headers ?? {},
    };
  }

  /** Runs fn while heartbeating, so a slow handler keeps its partitions. */
  private async withHeartbeat(fn: () => Promise<unknown>, payload: EachBatchPayload): Promise<void> {
    const timer = setInterval(() => void payload.heartbeat().catch(() => {}), this.heartbeatMs);
    try {
      await fn();
    } finally {
      clearInterval(timer);
    }
  }

  /** One try-and-backoff loop; reports the last error instead of throwing it. */
  private async attempt(fn: () => Promise<unknown>, payload: EachBatchPayload, stillRunning: () => boolean): Promise<{ ok: true } | { ok: false; error: Error; attempts: number }> {
    const kind = this.kind.kind;
    for (let attempt = 1; ; attempt++) {
      const timer = handlerDuration.startTimer({ kind });
      try {
        await this.withHeartbeat(fn, payload);
        timer();
        return { ok: true };
      } catch (err) {
        timer();
        const error = err instanceof Error ? err : new Error(String(err));
        const transient = isTransient(error);
        if (!transient && attempt >= this.maxAttempts) return { ok: false, error, attempts: attempt };
        handlerRetries.inc({ kind, transient: String(transient) });
        // An outage is waited out (backoff capped at 30 s); a bad message gets its few attempts.
        const delay = backoffDelay(transient ? Math.min(attempt, 10) : attempt, this.retryBaseMs);
        this.log[transient && attempt > 3 ? 'error' : 'warn']({ err: error, attempt, transient, delayMs: delay }, 'handler failed; retrying');
        if (!(await sleepWithHeartbeat(delay, () => payload.heartbeat(), stillRunning))) throw new StopRequested();
      }
    }
  }


  /** Runs fn with retries; after the last attempt the message goes to the dead-letter topic. */
  private async withRetries<T>(topic: string, partition: number, raw: KafkaMessage, payload: EachBatchPayload, stillRunning: () => boolean, fn: () => Promise<T>): Promise<T | undefined> {
    let value: T | undefined;
    const result = await this.attempt(async () => {
      value = await fn();
    }, payload, stillRunning);
    if (result.ok) return value;
    await this.deadLetter(topic, partition, raw, result.error, result.attempts);
    return undefined;
  }

  private async deadLetter(topic: string, partition: number, raw: KafkaMessage, error: Error, attempts: number): Promise<void> {
    const key = raw.key?.toString() ?? null;
    const letter: DeadLetter = {
      workerKind: this.kind.kind,
      topic,
      partition,
      offset: Number(raw.offset),
      key,
      value: raw.value ?? null,
      error: error.message,
      errorStack: error.stack ?? null,
      attempts,
      failedAt: Date.now(),
    };
    // Awaited (acks=all) before the offset is resolved: the message is never dropped silently.
    await this.deps.publisher.publish(deadLettersTopic, [{ key: key ?? '', value: letter }]);
    deadLetters.inc({ kind: this.kind.kind });
    this.log.error({ err: error, topic, partition, offset: raw.offset, key, attempts }, 'message dead-lettered');
  }
}
