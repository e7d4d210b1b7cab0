// The ingress's link cache hands a consumer crash kafkajs will not restart from to its onFailed
// (which the ingress turns into platform.shutdown.fail: /readyz 503, exit 1); a crash kafkajs
// restarts from, or one while stopping, is only logged. Kafka is a stub here: the real crash
// path of a consumer is covered by test/integration/platform/consumer-crash.test.ts.
import { describe, expect, it } from 'vitest';
import type { Kafka } from 'kafkajs';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import pino from 'pino';
import { LinkCache } from '../../../src/links/redirect/link-cache.ts';
import type { Logger } from '../../../src/platform/logger.ts';

function stubKafka() {
  const handlers = new Map<string, (event: unknown) => void>();
  const noop = async () => {};
  const kafka = {
    admin: () => ({ connect: noop, disconnect: noop, fetchTopicOffsets: async () => [] }),
    consumer: () => ({
      events: { CRASH: 'consumer.crash' },
      on: (name: string, handler: (event: unknown) => void) => handlers.set(name, handler),
      connect: noop, subscribe: noop, run: noop, disconnect: noop,
    }),
  } as unknown as Kafka;
  const crash = (restart: boolean) => handlers.get('consumer.crash')!({ payload: { error: new Error('boom'), restart } });
  return { kafka, crash };
}

describe('the link cache consumer crashing', () => {
  it('fails the process only when kafkajs will not restart the consumer, and not while stopping', async () => {
    const { kafka, crash } = stubKafka();
    const failures: Error[] = [];
    const cache = new LinkCache(kafka, {} as SchemaRegistry, 'p', pino({ level: 'silent' }) as unknown as Logger, (err) => failures.push(err));
    await cache.start(1000);
    crash(true);
    expect(failures).toEqual([]);
    crash(false);
    expect(failures.map((e) => e.message)).toEqual(['boom']);
    await cache.stop();
    crash(false);
    expect(failures).toHaveLength(1);
  });
});
