// A consumer stopped while kafkajs handles a crash stays stopped (patches/kafkajs+2.2.4+008+stop-wins-over-restart.patch):
// kafkajs restarted it once its crash handling ended, so it rejoined its group and heartbeat with
// nobody left to stop it; an ingress closed while Kafka came back left such a member behind, and
// the group could not be deleted at the end of the run.
import { describe, expect, it } from 'vitest';
import { eventually, testConfig } from '../../support/env.ts';
import { topicWithOneMessage } from '../../support/probe-message.ts';

const config = testConfig();

describe('a kafkajs consumer stopped during a crash', () => {
  it('is not restarted once the crash has been handled, and leaves its group empty', async () => {
    const { kafka, admin, topic } = await topicWithOneMessage(config, 'crashing');
    const groupId = `${config.TOPIC_PREFIX}.crashing-group`;
    try {
      let batches = 0;
      let crashed!: () => void;
      const crash = new Promise<void>((resolve) => (crashed = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const consumer = kafka.consumer({
        groupId,
        // A batch that fails is not retried: the consumer crashes at once and asks whether to restart.
        retry: {
          retries: 0,
          initialRetryTime: 100,
          restartOnFailure: async () => {
            crashed();
            await released;
            return true;
          },
        },
      });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        eachBatch: async () => {
          batches++;
          throw new Error('this batch always fails');
        },
      });
      await crash;
      // Stopped while the crash is being handled; the handler then decides to restart.
      await consumer.disconnect();
      release();
      const seen = batches;

      // kafkajs would have restarted it 100 ms later, and it would have read the batch again.
      await new Promise((r) => setTimeout(r, 3000));
      expect(batches).toBe(seen);
      await eventually(async () => {
        const [group] = (await admin.describeGroups([groupId])).groups;
        return group!.members.length === 0;
      }, 10_000);
    } finally {
      await admin.disconnect();
    }
  });
});
