// A KafkaJS error thrown by a consumer's own handler (a send of its producer that failed, say) is
// the handler's failure, retried like any other, not a sign that the group coordinator hung: the
// patch that rejoins the group on a request timeout or a lost connection
// (patches/kafkajs+2.2.4+007+coordinator-hang-rejoins.patch) took it for one and rejoined the group.
import { describe, expect, it } from 'vitest';
import { KafkaJSConnectionError, KafkaJSRequestTimeoutError } from 'kafkajs';
import { eventually, testConfig } from '../../support/env.ts';
import { topicWithOneMessage } from '../../support/probe-message.ts';

const config = testConfig();

describe("a kafkajs consumer whose handler throws a KafkaJS error of its own", () => {
  for (const [kind, handlerError] of [
    ['eachMessage', () => new KafkaJSConnectionError('the handler could not reach its broker')],
    ['eachBatch', () => new KafkaJSRequestTimeoutError('the handler\'s send timed out')],
  ] as const) {
    it(`(${kind}) retries the message in the group it is in, without rejoining`, async () => {
      const { kafka, admin, topic } = await topicWithOneMessage(config, `handler-errors-${kind}`);
      const consumer = kafka.consumer({ groupId: `${config.TOPIC_PREFIX}.handler-errors-${kind}`, retry: { initialRetryTime: 100 } });
      try {
        let joins = 0;
        consumer.on(consumer.events.GROUP_JOIN, () => joins++);
        let calls = 0;
        const handle = () => {
          if (++calls === 1) throw handlerError();
        };
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run(kind === 'eachMessage' ? { eachMessage: async () => handle() } : { eachBatch: async () => handle() });
        await eventually(async () => calls >= 2, 20_000);
        expect(joins).toBe(1);
      } finally {
        await consumer.disconnect();
        await admin.disconnect();
      }
    });
  }
});
