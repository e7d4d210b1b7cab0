// Every ingress keeps every link in memory, fed by the compacted
// links.changelog topic: it reads the whole topic at start (warm-up) and then
// follows it, so a change reaches every instance within moments and a redirect
// never touches a database. Each instance reads all partitions through a
// consumer group of its own; it commits nothing and always starts from the
// beginning, since the compacted topic is the state.
import { randomUUID } from 'node:crypto';
import type { Admin, Consumer, Kafka } from 'kafkajs';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { linksChangelogTopic } from '../../../topics/links-changelog.ts';
import { prefixed } from '../../platform/kafka/topic-definition.ts';
import { METADATA_MAX_AGE_MS } from '../../platform/kafka/metadata-age.ts';
import type { Logger } from '../../platform/logger.ts';
import { isTransient } from '../../platform/actors/transient.ts';
import { within } from '../../platform/within.ts';
import { linkKey, type LinkState } from '../changelog/link-state.ts';
import { routingOf } from './link-routing.ts';

export class LinkCache {
  private readonly kafka: Kafka;
  private readonly registry: SchemaRegistry;
  private readonly topicPrefix: string;
  private readonly log: Logger;
  private readonly links = new Map<string, LinkState>();
  private consumer: Consumer | undefined;
  private warm = false;
  private readonly listeners = new Set<(link: LinkState) => void>();
  /** Called when the consumer crashed and kafkajs will not restart it: the cache no longer follows the changelog. */
  private readonly onFailed: ((error: Error) => void) | undefined;
  private stopping = false;

  constructor(
    kafka: Kafka,
    registry: SchemaRegistry,
    topicPrefix: string,
    log: Logger,
    onFailed?: (error: Error) => void,
  ) {
    this.onFailed = onFailed;
    this.kafka = kafka;
    this.registry = registry;
    this.topicPrefix = topicPrefix;
    this.log = log;
  }

  /** The link of a key (linkKey: the short ID on the base domain, `<domain id>/<short ID>` on a branded one). */
  get(key: string): LinkState | undefined {
    return this.links.get(key);
  }

  get size(): number {
    return this.links.size;
  }

  get isWarm(): boolean {
    return this.warm;
  }

  /** Called for every applied change (tests and the scan-limit view use it). */
  onChange(listener: (link: LinkState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Applies a state unless an equal or newer version of the link is already known. */
  apply(state: LinkState): void {
    const key = linkKey(state.domainId, state.shortId);
    const current = this.links.get(key);
    if (current && current.version > state.version && current.id === state.id) return;
    routingOf(state); // worked out now, so redirects only read it
    this.links.set(key, state);
    for (const listener of this.listeners) listener(state);
  }

  /** The changelog's end offsets; retried while Kafka is still electing leaders (an ingress started just after a broker restart). */
  private async endOffsets(topic: string, deadline: number): Promise<Awaited<ReturnType<Admin['fetchTopicOffsets']>>> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      for (;;) {
        try {
          return await admin.fetchTopicOffsets(topic);
        } catch (err) {
          if (!isTransient(err) || Date.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    } finally {
      await admin.disconnect();
    }
  }

  /** Starts following the changelog; resolves once everything published before the call is in memory. */
  async start(warmTimeoutMs = 60_000): Promise<void> {
    const topic = prefixed(this.topicPrefix, linksChangelogTopic.name);
    const ends = await this.endOffsets(topic, Date.now() + warmTimeoutMs);
    // Partition → offset of the last message present at start; warm once each is read.
    const pending = new Map(ends.filter((p) => Number(p.high) > Number(p.low)).map((p) => [p.partition, BigInt(p.high) - 1n]));
    let markWarm!: () => void;
    const warmed = new Promise<void>((resolve) => (markWarm = resolve));
    const check = () => {
      if (!this.warm && pending.size === 0) {
        this.warm = true;
        markWarm();
      }
    };

    // metadataMaxAge: a dead or hung leader's partitions are read from their new leaders within a second of the election.
    const consumer = this.kafka.consumer({ groupId: prefixed(this.topicPrefix, `ingress-link-cache-${randomUUID()}`), maxWaitTimeInMs: 100, metadataMaxAge: METADATA_MAX_AGE_MS });
    this.consumer = consumer;
    consumer.on(consumer.events.CRASH, (event) => {
      // A crash kafkajs restarts (a broker away, say) is a warning; one it does not, an error.
      this.log[event.payload.restart ? 'warn' : 'error']({ err: event.payload.error, restart: event.payload.restart }, 'link cache consumer crashed');
      // A retriable crash is restarted by kafkajs; any other leaves the cache stale for good.
      if (!event.payload.restart && !this.stopping) this.onFailed?.(event.payload.error);
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, heartbeat }) => {
        for (const message of batch.messages) {
          if (message.value) {
            try {
              this.apply((await this.registry.decode(message.value)) as LinkState);
            } catch (err) {
              this.log.error({ err, offset: message.offset }, 'undecodable links.changelog message skipped');
            }
          }
          const target = pending.get(batch.partition);
          if (target !== undefined && BigInt(message.offset) >= target) pending.delete(batch.partition);
        }
        await heartbeat();
        check();
      },
    });
    check();
    await within(warmed, warmTimeoutMs, `link cache not warm after ${warmTimeoutMs} ms`);
    this.log.info({ links: this.links.size }, 'link cache warm');
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.consumer?.disconnect();
    this.consumer = undefined;
  }
}
