// A transactional outbox, as the platform sees it. A product writes an outbox
// row in the same transaction as its change, publishes right after the commit,
// and lets the relay (outbox-relay.ts) publish whatever a crash or a Kafka
// outage left behind. The product says how to find and publish its pending
// items (OutboxSource); the platform repeats the relay for every Outbox listed.

/** What a product implements for one outbox. */
export interface OutboxSource<T> {
  /** Names the outbox in logs, e.g. the topic it feeds. */
  name: string;
  /** Items written more than `ageMs` ago and not yet published, oldest first, at most `limit`. */
  pending(ageMs: number, limit: number): Promise<T[]>;
  /** Publishes these items and marks them done; throws when they are not (they stay pending). */
  publish(items: T[]): Promise<void>;
  /** An item's id, for logs. */
  idOf(item: T): string;
  /**
   * Items handed to one `publish` call; a failing call holds up only its own items.
   * 1 publishes (and fails) each item alone; the default publishes all pending items at once.
   */
  batchSize?: number;
  /** Items not yet published, for the metrics; the outbox shows no backlog without it. */
  backlog?(): Promise<number>;
}

/** An outbox the platform relays: listed by a product, repeated by startOutboxRelays. */
export interface Outbox {
  name: string;
  /** Publishes what has been pending longer than `ageMs`; logs failures and never throws. */
  relayOnce(ageMs: number): Promise<void>;
  /** Items not yet published, for the metrics (linkmail_outbox_backlog). */
  backlog?(): Promise<number>;
}
