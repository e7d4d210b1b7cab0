// The relay of one outbox: publishes its pending items in batches, so a batch
// that fails (a bad item, Kafka away) leaves the others to go, and never throws:
// it runs on a timer, and what it could not publish is still pending next time.
import type { Logger } from '../logger.ts';
import type { Outbox, OutboxSource } from './outbox.ts';

/** Items read per relay run; the rest wait for the next run. */
const PENDING_LIMIT = 500;
/** Ids named in a log line about a failed batch. */
const LOGGED_IDS = 10;

export function outboxRelay<T>(source: OutboxSource<T>, log: Logger): Outbox {
  const logger = log.child({ outbox: source.name });
  return {
    name: source.name,
    ...(source.backlog ? { backlog: () => source.backlog!() } : {}),
    async relayOnce(ageMs: number): Promise<void> {
      let items: T[];
      try {
        items = await source.pending(ageMs, PENDING_LIMIT);
      } catch (err) {
        logger.warn({ err }, 'outbox relay could not read pending items; will retry');
        return;
      }
      const size = Math.max(1, source.batchSize ?? items.length);
      let published = 0;
      for (let i = 0; i < items.length; i += size) {
        const batch = items.slice(i, i + size);
        try {
          await source.publish(batch);
          published += batch.length;
        } catch (err) {
          logger.warn({ err, ids: batch.slice(0, LOGGED_IDS).map((item) => source.idOf(item)), items: batch.length }, 'outbox relay could not publish; will retry');
        }
      }
      if (published > 0) logger.info({ published }, 'outbox relay published pending items');
    },
  };
}
