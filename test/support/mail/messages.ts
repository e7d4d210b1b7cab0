// Reading what /emails stored and published, as a data team and an operator would see it.
import type { Pool } from '../../../src/platform/postgres/pool.ts';
import type { Config } from '../../../src/platform/config.ts';
import type { MailMessageEvent } from '../../../src/mail/emails/message-outbox.ts';
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { createSchemaRegistry } from '../../../src/platform/registry/schema-registry.ts';
import { prefixed } from '../../../src/platform/kafka/topic-definition.ts';
import { kafkaSecurity } from '../../../src/platform/kafka/security.ts';

/** Messages stored for the organization. */
export async function storedCount(pg: Pool, organizationId: string): Promise<number> {
  const { rows } = await pg.query<{ n: number }>('SELECT count(*)::int AS n FROM mail_messages WHERE organization_id = $1', [organizationId]);
  return rows[0]!.n;
}

/**
 * The mail.messages records of these message ids, read from the beginning of the topic until every
 * id has one, then `settleMs` longer, so that a duplicate would be seen too.
 */
export async function publishedRecords(config: Config, ids: readonly string[], settleMs = 3000, timeoutMs = 30_000): Promise<Map<string, MailMessageEvent[]>> {
  const out = new Map<string, MailMessageEvent[]>(ids.map((id) => [id, []]));
  const kafka = new Kafka({ brokers: config.KAFKA_BROKERS.split(','), ...kafkaSecurity(config), logLevel: logLevel.NOTHING });
  const registry = createSchemaRegistry(config);
  const consumer = kafka.consumer({ groupId: prefixed(config.TOPIC_PREFIX, `reader-${randomUUID()}`) });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: prefixed(config.TOPIC_PREFIX, 'mail.messages'), fromBeginning: true });
    void consumer.run({
      eachMessage: async ({ message }) => {
        if (!message.value) return;
        const value = (await registry.decode(message.value)) as MailMessageEvent;
        out.get(value.message_id)?.push(value);
      },
    });
    const end = Date.now() + timeoutMs;
    let allSeenAt = 0;
    while (Date.now() < end) {
      if (!allSeenAt && [...out.values()].every((list) => list.length > 0)) allSeenAt = Date.now();
      if (allSeenAt && Date.now() - allSeenAt >= settleMs) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await consumer.disconnect();
  }
  return out;
}
