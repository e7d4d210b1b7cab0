// Gauges read when Prometheus scrapes: the outboxes' backlog (Postgres) and the
// consumer groups' lag (Kafka). A failed read leaves the series out of that
// scrape (and logs), rather than failing the whole /metrics answer.
import type { Admin } from 'kafkajs';
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logger.ts';
import type { Outbox } from '../outbox/outbox.ts';
import { consumerLag } from './consumer-lag.ts';

/** linkmail_outbox_backlog{outbox}: rows written and not yet published. */
export function outboxBacklogGauge(outboxes: readonly Outbox[], log: Logger) {
  return (registry: Registry): void => {
    new Gauge({
      name: 'linkmail_outbox_backlog',
      help: 'Items in a transactional outbox not yet published to their topic (the relay publishes those older than 2 s).',
      labelNames: ['outbox'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const outbox of outboxes) {
          if (!outbox.backlog) continue;
          try {
            this.set({ outbox: outbox.name }, await outbox.backlog());
          } catch (err) {
            log.warn({ err, outbox: outbox.name }, 'metrics: could not count an outbox backlog');
          }
        }
      },
    });
  };
}

export interface ConsumedGroup {
  group: string;
  topics: readonly string[];
}

/** linkmail_kafka_consumer_lag{group,topic,partition}: messages a group has yet to commit. */
export function consumerLagGauge(admin: Admin, groups: () => readonly ConsumedGroup[], log: Logger) {
  return (registry: Registry): void => {
    new Gauge({
      name: 'linkmail_kafka_consumer_lag',
      help: 'Messages of a partition that a consumer group has not committed yet (end offset less committed offset).',
      labelNames: ['group', 'topic', 'partition'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const { group, topics } of groups()) {
          try {
            for (const p of await consumerLag(admin, group, topics)) this.set({ group: p.group, topic: p.topic, partition: String(p.partition) }, p.lag);
          } catch (err) {
            log.warn({ err, group }, 'metrics: could not read a consumer group\'s lag');
          }
        }
      },
    });
  };
}
