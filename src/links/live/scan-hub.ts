// The live scans of every workspace, in each ingress: one consumer reads every
// partition of the `scans` topic (a consumer group of its own, unique to this process,
// committing nothing) and hands each scan to the streams open on this ingress for its
// workspace. Nothing on the redirect path: scans arrive from Kafka as the scan sink's do.
//
// The consumer runs only while a stream may want it: an ingress where no stream is open reads
// nothing and holds nothing. The first subscribe starts it (reading back the retention, then
// live) and waits for it; concurrent first subscribes share that start. When the last
// subscription closes the hub lingers idleStopMs (by default the retention, so a client that
// reconnects within it still resumes from the ring), then stops the consumer and drops the
// rings; a subscribe meanwhile waits for the stop and starts it again. Starts and stops run one
// after the other (`lifecycle`), so there is never a second consumer nor one without its rings.
//
// Exports, for the API's streams and any other (a shared analytics page):
//   ScanHub                — new ScanHub(options); endAll() before the server closes (each
//                            subscriber's onShutdown: its stream ends with `end: shutdown`; no
//                            subscribe is taken after it); stop() (for good). The ingress owns one (links-http.ts:
//                            LinksHttp.liveScans, which calls both).
//   hub.subscribe(workspaceId, filter, subscriber, resumeFrom?, { signal?, replayWithin? })
//                          — starts the consumer if it is not running (resolves once it has read
//                            what was published before, so a new stream starts at "now"); then
//                            a Subscription: the workspace's scans that match `filter`, each
//                            once, in order per partition, as LiveScanEvent batches to
//                            subscriber.onEvents (called synchronously, never concurrently).
//                            resumeFrom: a parsed Last-Event-ID (live-cursor.ts parseCursor);
//                            the scans after it are sent first (decoded outside the hub's lock,
//                            a slice at a time: a long replay holds up no other stream).
//                            replayWithin: a resume from further back than that starts live
//                            instead (a public page's stream: anyone may send any cursor).
//                            signal: the client went away while waiting; SubscribeAbandoned.
//                            Throws InvalidResume for a cursor naming partitions the topic lacks,
//                            LiveScansUnavailable when the consumer could not start (the next
//                            subscribe tries again) or the hub is stopping (endAll).
//   Subscription           — cursor() (the text of its position now, for an `id:` line),
//                            resumed ('live' | 'resumed' | 'expired': the ring no longer held
//                            every scan after the cursor, so some were skipped), close().
//   ScanFilter             — { linkId?, country? (upper case), device?, trigger? }.
//   LiveScanEvent          — { id, data }: the cursor after this scan and the scan's JSON (the
//                            fields of a scan.created webhook's `data`; no IP is in a scan).
//
// Resuming: a stream's position is, per partition, the offset of the last message it has
// passed (cursor). The hub keeps the last RETENTION of messages per partition in a ring
// (bounded in count too), read again from Kafka by timestamp whenever the consumer starts, so
// a stream resumes on any ingress, even one started after the first was killed or one whose
// consumer stopped for want of streams.
import { randomUUID } from 'node:crypto';
import type { Consumer, Kafka, KafkaMessage } from 'kafkajs';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { scansTopic } from '../../../topics/scans.ts';
import { prefixed } from '../../platform/kafka/topic-definition.ts';
import { METADATA_MAX_AGE_MS } from '../../platform/kafka/metadata-age.ts';
import type { Logger } from '../../platform/logger.ts';
import { within } from '../../platform/within.ts';
import type { ScanEvent } from '../scans/scan-event.ts';
import { scanCreatedData } from '../webhooks/scan-payload.ts';
import { formatCursor, type Cursor } from './live-cursor.ts';
import { ScanRing, type RingScan } from './scan-ring.ts';

export interface ScanFilter {
  linkId?: string;
  /** ISO 3166-1 alpha-2, upper case. */
  country?: string;
  device?: string;
  trigger?: 'link' | 'qr';
}

export interface LiveScanEvent {
  /** The stream's cursor once this scan is passed: the event's `id`. */
  id: string;
  /** The scan, as JSON. */
  data: string;
}

export interface ScanSubscriber {
  /** The next scans of the stream, in order; called synchronously by the hub. */
  onEvents(events: LiveScanEvent[]): void;
  /** The ingress is stopping (endAll): end the stream, so the server's close need not wait for it. */
  onShutdown?(): void;
}

export interface Subscription {
  /** How the stream started: live (no cursor), resumed (every scan after the cursor follows), expired (the cursor was older than the ring: some scans after it are gone). */
  readonly resumed: 'live' | 'resumed' | 'expired';
  /** The stream's position now, as an event id. */
  cursor(): string;
  close(): void;
}

export class InvalidResume extends Error {}

/** The subscribe's signal was aborted (its client left) before the subscription was made: nothing is held. */
export class SubscribeAbandoned extends Error {}

export interface SubscribeOptions {
  /** Aborted when the client leaves: a subscribe still waiting (for the start, the lock, its replay) gives up. */
  signal?: AbortSignal;
  /** A resume whose replay would reach back further than `ms` or pass more than `scans` of the workspace starts live instead. */
  replayWithin?: { ms: number; scans: number };
}

/** The consumer could not start (Kafka does not answer, say): no stream for now. */
export class LiveScansUnavailable extends Error {}

/** Scans handed out between two turns of the event loop. */
const YIELD_EVERY = 64;

export interface ScanHubOptions {
  kafka: Kafka;
  registry: SchemaRegistry;
  topicPrefix: string;
  log: Logger;
  /** How far back the ring reaches (and how far back a new hub reads at start). */
  retentionMs: number;
  /** At most this many scans per partition in the ring, whatever their age. */
  maxPerPartition: number;
  /** With no stream open for this long, the consumer stops and the rings are dropped. */
  idleStopMs: number;
  /** At most this long to read back the retention when the consumer starts (default 60 s). */
  startTimeoutMs?: number;
  /** A subscribe waits at most this long for the start (default 15 s; Kafka away, its client retries for about a minute); the start goes on. */
  startWaitMs?: number;
  /** The consumer crashed for good: the hub no longer follows the topic. */
  onFailed?: (error: Error) => void;
}

interface Decoded {
  linkId: string;
  country: string | null;
  device: string;
  trigger: string;
  data: string;
}

interface Ring {
  /** The scans, as Avro (decoded only for a stream that wants them: memory). */
  scans: ScanRing;
  /** Every message from this offset on is in the ring (or not yet read). */
  coveredFrom: number;
  /** The offset of the last message handed to the streams. */
  passed: number;
}

interface Sub {
  workspaceId: string;
  filter: ScanFilter;
  subscriber: ScanSubscriber;
  /** Positions given at resume that the hub may not have passed yet: nothing at or below them is sent again. */
  floor: Cursor;
  pending: LiveScanEvent[];
  /** Its replay is being decoded: live scans wait in `pending` behind it. */
  holding: boolean;
}

export class ScanHub {
  private readonly options: ScanHubOptions;
  private readonly rings = new Map<number, Ring>();
  private readonly byWorkspace = new Map<string, Set<Sub>>();
  /** One string per workspace id for all its ring entries. */
  private readonly workspaceIds = new Map<string, string>();
  private consumer: Consumer | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  /** The consumer's start (resolved: it runs), shared by concurrent subscribes; undefined while stopped or stopping. */
  private running: Promise<void> | undefined;
  /** `running` has resolved: the consumer is live. */
  private ready = false;
  /** Starts and stops, one after the other. Never rejects. */
  private lifecycle: Promise<void> = Promise.resolve();
  /** Subscriptions open or being opened: the consumer stops only when there are none. */
  private users = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Aborted by endAll: subscribes still waiting for the start are refused at once. */
  private readonly ending = new AbortController();

  constructor(options: ScanHubOptions) {
    this.options = options;
  }

  get streams(): number {
    let n = 0;
    for (const subs of this.byWorkspace.values()) n += subs.size;
    return n;
  }

  /** Scans held in the ring, over all partitions. */
  get held(): number {
    let n = 0;
    for (const ring of this.rings.values()) n += ring.scans.size;
    return n;
  }

  /** Starts the consumer unless it runs or is starting; waits for an earlier stop first. */
  private ensureRunning(): Promise<void> {
    if (this.closed) return Promise.reject(new LiveScansUnavailable('the scan hub is stopped'));
    if (!this.running) {
      const run = this.lifecycle.then(() => this.startConsumer());
      this.running = run;
      this.lifecycle = run.then(() => {
        if (this.running !== run) return;
        this.ready = true;
        // Every subscribe that wanted it stopped waiting: it stops after the linger like any idle consumer.
        if (this.users === 0) this.armIdleStop();
      }, () => {
        // A failed start leaves nothing running (startConsumer cleans up): the next subscribe tries again.
        if (this.running === run) this.running = undefined;
      });
    }
    return this.running;
  }

  /** A subscription closed (or failed to open): with none left, stop after the linger. */
  private release(): void {
    if (--this.users === 0) this.armIdleStop();
  }

  /** Not before the start is done: a start nobody waits for any more lingers from its end (see ensureRunning). */
  private armIdleStop(): void {
    if (this.closed || !this.ready) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.users > 0 || !this.ready || this.closed) return;
      this.running = undefined;
      this.ready = false;
      this.lifecycle = this.lifecycle.then(() => this.stopConsumer());
    }, this.options.idleStopMs);
    this.idleTimer.unref();
  }

  /** Disconnects the consumer (after the batch in hand) and drops the rings. Never rejects. */
  private async stopConsumer(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = undefined;
    try {
      await consumer?.disconnect();
    } catch (err) {
      this.options.log.warn({ err }, 'live scans consumer did not disconnect cleanly');
    }
    await this.chain;
    this.rings.clear();
    this.workspaceIds.clear();
  }

  private async startConsumer(): Promise<void> {
    try {
      await this.readBackThenLive();
    } catch (err) {
      this.options.log.warn({ err }, 'live scans consumer did not start');
      await this.stopConsumer();
      throw err;
    }
  }

  private async readBackThenLive(): Promise<void> {
    const { kafka, topicPrefix, retentionMs, maxPerPartition, log, startTimeoutMs: timeoutMs = 60_000 } = this.options;
    const topic = prefixed(topicPrefix, scansTopic.name);
    const admin = kafka.admin();
    await admin.connect();
    let ends: Awaited<ReturnType<typeof admin.fetchTopicOffsets>>;
    let since: Awaited<ReturnType<typeof admin.fetchTopicOffsetsByTimestamp>>;
    try {
      ends = await admin.fetchTopicOffsets(topic);
      since = await admin.fetchTopicOffsetsByTimestamp(topic, Date.now() - retentionMs);
    } finally {
      await admin.disconnect();
    }
    // Where to read from: the retention's start, no earlier than the ring can hold.
    const pending = new Map<number, number>();
    for (const end of ends) {
      const high = Number(end.high);
      const from = Math.max(Number(since.find((s) => s.partition === end.partition)?.offset ?? high), high - maxPerPartition, Number(end.low));
      this.rings.set(end.partition, { scans: new ScanRing(), coveredFrom: from, passed: from - 1 });
      if (high > from) pending.set(end.partition, high - 1);
    }
    let markCaughtUp!: () => void;
    let markCrashed!: (error: Error) => void;
    const caughtUp = new Promise<void>((resolve, reject) => {
      markCaughtUp = resolve;
      markCrashed = reject;
    });
    caughtUp.catch(() => {}); // a crash before the wait below is still the wait's answer
    let live = false;
    const check = () => pending.size === 0 && markCaughtUp();

    const consumer = kafka.consumer({ groupId: prefixed(topicPrefix, `ingress-live-scans-${randomUUID()}`), maxWaitTimeInMs: 100, metadataMaxAge: METADATA_MAX_AGE_MS });
    this.consumer = consumer;
    consumer.on(consumer.events.CRASH, (event) => {
      if (this.consumer !== consumer) return; // stopped meanwhile
      log[event.payload.restart ? 'warn' : 'error']({ err: event.payload.error, restart: event.payload.restart }, 'live scans consumer crashed');
      if (event.payload.restart) return;
      // Before it is live, the start fails (that subscribe is refused); after, the streams would silently starve.
      if (live) this.options.onFailed?.(event.payload.error);
      else markCrashed(event.payload.error);
    });
    // The group commits nothing: after any (re)join, each partition goes on after what was passed,
    // instead of from the topic's beginning.
    const seekToPassed = () => {
      for (const [partition, ring] of this.rings) consumer.seek({ topic, partition, offset: String(ring.passed + 1) });
    };
    consumer.on(consumer.events.GROUP_JOIN, () => {
      try {
        seekToPassed();
      } catch (err) {
        log.warn({ err }, 'live scans consumer could not seek after joining');
      }
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, heartbeat }) => {
        await this.locked(() => this.take(batch.partition, batch.messages));
        const target = pending.get(batch.partition);
        const last = batch.messages.at(-1);
        if (target !== undefined && last && Number(last.offset) >= target) pending.delete(batch.partition);
        await heartbeat();
        check();
      },
    });
    seekToPassed();
    check();
    await within(caughtUp, timeoutMs, `live scans not caught up after ${timeoutMs} ms`);
    live = true;
  }

  /** Tells every subscriber the ingress is stopping (the owner calls it before the server closes). */
  endAll(): void {
    // No subscribe from here on (one still waiting for the start would open a stream nobody ends).
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.ending.abort();
    for (const subs of [...this.byWorkspace.values()]) {
      for (const sub of [...subs]) sub.subscriber.onShutdown?.();
    }
  }

  /** Stops the consumer for good (the ingress is closing, after endAll); a later subscribe is refused. */
  async stop(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.running = undefined;
    this.ready = false;
    this.lifecycle = this.lifecycle.then(() => this.stopConsumer());
    await this.lifecycle;
  }

  /** Whether the consumer runs (or is starting): false on an ingress with no stream for idleStopMs. */
  get active(): boolean {
    return this.running !== undefined;
  }

  /** See the file's head. */
  async subscribe(workspaceId: string, filter: ScanFilter, subscriber: ScanSubscriber, resumeFrom?: Cursor, options: SubscribeOptions = {}): Promise<Subscription> {
    this.users++;
    clearTimeout(this.idleTimer);
    try {
      if (options.signal?.aborted) throw new SubscribeAbandoned('the client left');
      const waitMs = this.options.startWaitMs ?? 15_000;
      const started = untilAborted(untilAborted(this.ensureRunning(), options.signal, () => new SubscribeAbandoned('the client left')), this.ending.signal, () => new LiveScansUnavailable('the scan hub is stopping'));
      await within(started, waitMs, `the live scans consumer did not start within ${waitMs} ms`).catch((err: unknown) => {
        throw err instanceof LiveScansUnavailable || err instanceof SubscribeAbandoned ? err : new LiveScansUnavailable('the live scans consumer did not start', { cause: err });
      });
      if (this.closed) throw new LiveScansUnavailable('the scan hub is stopping');
      return await this.subscribed(workspaceId, filter, subscriber, resumeFrom, options);
    } catch (err) {
      this.release();
      throw err;
    }
  }

  private async subscribed(workspaceId: string, filter: ScanFilter, subscriber: ScanSubscriber, resumeFrom: Cursor | undefined, options: SubscribeOptions): Promise<Subscription> {
    for (const partition of resumeFrom?.keys() ?? []) {
      if (!this.rings.has(partition)) throw new InvalidResume(`partition ${partition} is not one of the scans topic's`);
    }
    const sub: Sub = { workspaceId, filter, subscriber, floor: new Map(), pending: [], holding: false };
    let resumed: Subscription['resumed'] = 'live';
    const replay: Array<{ partition: number; entry: RingScan }> = [];
    const replayFrom: Cursor = new Map();
    const { signal, replayWithin } = options;
    // In the lock, and without an await: no batch is handed out between finding the replay and
    // joining the live streams, and endAll either sees this subscription or it is refused here.
    await this.locked(() => {
      if (this.closed) throw new LiveScansUnavailable('the scan hub is stopping');
      if (signal?.aborted) throw new SubscribeAbandoned('the client left');
      if (resumeFrom && !(replayWithin && this.reachesBack(workspaceId, resumeFrom, replayWithin))) {
        resumed = 'resumed';
        for (const [partition, ring] of this.rings) {
          const after = resumeFrom.get(partition) ?? ring.passed;
          if (after + 1 < ring.coveredFrom) resumed = 'expired';
          replayFrom.set(partition, after);
          let last = after;
          // The entries are views of the ring's slabs, which are never reused: still valid after an eviction.
          for (const entry of ring.scans.after(after, workspaceId)) {
            replay.push({ partition, entry });
            last = entry.offset;
          }
          sub.floor.set(partition, last);
        }
      }
      sub.holding = replay.length > 0;
      let subs = this.byWorkspace.get(workspaceId);
      if (!subs) this.byWorkspace.set(workspaceId, (subs = new Set()));
      subs.add(sub);
    });
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      const subs = this.byWorkspace.get(workspaceId);
      subs?.delete(sub);
      if (subs?.size === 0) this.byWorkspace.delete(workspaceId);
      this.release();
    };
    if (sub.holding) {
      let events: LiveScanEvent[];
      try {
        events = await this.decodeReplay(replay, replayFrom, filter, signal);
      } catch (err) {
        // The caller's catch releases this subscribe's use of the hub.
        closed = true;
        const subs = this.byWorkspace.get(workspaceId);
        subs?.delete(sub);
        if (subs?.size === 0) this.byWorkspace.delete(workspaceId);
        throw err;
      }
      // The replay first, then what came live meanwhile (every live scan is after every replayed one).
      sub.pending = events.concat(sub.pending);
      sub.holding = false;
      this.flush(sub);
    }
    return { resumed, cursor: () => this.cursorOf(sub), close };
  }

  /** Whether a resume would replay from further back than `within` allows (older than its ms, or more than its scans). */
  private reachesBack(workspaceId: string, resumeFrom: Cursor, within: { ms: number; scans: number }): boolean {
    const since = Date.now() - within.ms;
    let scans = 0;
    for (const [partition, after] of resumeFrom) {
      const ring = this.rings.get(partition)!;
      if (after >= ring.passed) continue;
      if (after + 1 < ring.coveredFrom) return true;
      const first = ring.scans.firstAfter(after);
      if (first && first.at < since) return true;
      for (const _ of ring.scans.after(after, workspaceId)) if (++scans > within.scans) return true;
    }
    return false;
  }

  /** A replay's events, decoded outside the lock a slice at a time (each decode is Avro work; the event loop serves others between slices). */
  private async decodeReplay(replay: Array<{ partition: number; entry: RingScan }>, from: Cursor, filter: ScanFilter, signal: AbortSignal | undefined): Promise<LiveScanEvent[]> {
    const position = new Map(from);
    const events: LiveScanEvent[] = [];
    let n = 0;
    // Partition by partition, each in offset order (a workspace's scans are all on one: its key).
    for (const { partition, entry } of replay) {
      if (++n % YIELD_EVERY === 0) {
        await new Promise((resolve) => setImmediate(resolve));
        if (signal?.aborted) throw new SubscribeAbandoned('the client left');
      }
      const scan = await this.decoded(entry.value, entry.offset);
      position.set(partition, entry.offset);
      // Only the replayed positions: later scans of other partitions are still to come.
      if (scan && matches(scan, filter)) events.push({ id: formatCursor(position), data: scan.data });
    }
    return events;
  }

  /** Runs `work` after every earlier batch and subscription. */
  private locked<T>(work: () => Promise<T> | T): Promise<T> {
    const run = this.chain.then(work);
    this.chain = run.catch(() => {});
    return run;
  }

  private cursorOf(sub: Sub): string {
    const cursor: Cursor = new Map();
    for (const [partition, ring] of this.rings) cursor.set(partition, Math.max(ring.passed, sub.floor.get(partition) ?? -1));
    return formatCursor(cursor);
  }

  /** Keeps one partition's messages in its ring and hands them to the streams of their workspaces. */
  private async take(partition: number, messages: KafkaMessage[]): Promise<void> {
    const ring = this.rings.get(partition);
    if (!ring) return;
    const touched = new Set<Sub>();
    let handed = 0;
    for (const message of messages) {
      // A large batch is handed out in slices, letting the event loop serve requests (redirects) between them.
      if (++handed % YIELD_EVERY === 0) {
        for (const sub of touched) this.flush(sub);
        touched.clear();
        await new Promise((resolve) => setImmediate(resolve));
      }
      const offset = Number(message.offset);
      // Before the seek took effect (or a message read twice after a rebalance).
      if (offset <= ring.passed) continue;
      const key = message.key?.toString('utf8') ?? '';
      let workspaceId = this.workspaceIds.get(key);
      if (workspaceId === undefined) {
        if (this.workspaceIds.size >= 100_000) this.workspaceIds.clear();
        this.workspaceIds.set(key, (workspaceId = key));
      }
      ring.passed = offset;
      if (!message.value) continue;
      // Copied into the ring: a slice would keep the whole fetch response alive for as long as the ring holds it.
      ring.scans.push(offset, Number(message.timestamp), workspaceId, message.value);
      const subs = this.byWorkspace.get(workspaceId);
      if (!subs) continue;
      const scan = await this.decoded(message.value, offset);
      if (!scan) continue;
      for (const sub of subs) {
        if (offset <= (sub.floor.get(partition) ?? -1) || !matches(scan, sub.filter)) continue;
        sub.pending.push({ id: this.cursorOf(sub), data: scan.data });
        touched.add(sub);
      }
    }
    for (const sub of touched) this.flush(sub);
    this.evict(ring);
  }

  private flush(sub: Sub): void {
    if (sub.pending.length === 0 || sub.holding) return;
    const events = sub.pending;
    sub.pending = [];
    try {
      sub.subscriber.onEvents(events);
    } catch (err) {
      this.options.log.error({ err }, 'live scan stream failed to take its events');
    }
  }

  private async decoded(value: Buffer, offset: number): Promise<Decoded | null> {
    try {
      const scan = (await this.options.registry.decode(value)) as ScanEvent;
      return { linkId: scan.linkId, country: scan.country ?? null, device: scan.device, trigger: scan.trigger ?? 'link', data: JSON.stringify(scanCreatedData(scan)) };
    } catch (err) {
      this.options.log.error({ err, offset }, 'undecodable scans message left out of live streams');
      return null;
    }
  }

  private evict(ring: Ring): void {
    const since = Date.now() - this.options.retentionMs;
    const max = this.options.maxPerPartition;
    for (let first = ring.scans.oldest(); first && (ring.scans.size > max || first.at < since); first = ring.scans.oldest()) {
      ring.coveredFrom = first.offset + 1;
      ring.scans.shift();
    }
  }
}

/** `work`, or `error()` as soon as `signal` aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined, error: () => Error): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(error());
  }
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(error());
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}

function matches(scan: Decoded, filter: ScanFilter): boolean {
  return (filter.linkId === undefined || scan.linkId === filter.linkId)
    && (filter.country === undefined || scan.country === filter.country)
    && (filter.device === undefined || scan.device === filter.device)
    && (filter.trigger === undefined || scan.trigger === filter.trigger);
}
