// Once-per-message effects in Postgres. Kafka delivers at least once: after a
// crash or a rebalance a partition's messages come again. An actor whose effect
// lives in Postgres records, in the same transaction as the effect, the last
// offset it applied per (group, topic, partition) in actor_offsets; messages at
// or below it are skipped. The row is locked first, so two consumers that
// briefly share a partition during a rebalance apply a batch one after the other.
import type pg from 'pg';
import { withTransaction, type Pool } from '../postgres/pool.ts';
import type { ActorMessage } from './worker-kind.ts';

/**
 * Runs `apply` in one transaction with only the messages not applied yet, and
 * records the batch's last offset in it. `messages` are one partition's, in
 * offset order (a batch, or a single message). Resolves to what `apply`
 * returned, or undefined when every message was applied already.
 */
export async function withAppliedOffsets<V, T>(
  pool: Pool,
  group: string,
  messages: readonly ActorMessage<V>[],
  apply: (client: pg.PoolClient, fresh: ActorMessage<V>[]) => Promise<T>,
): Promise<T | undefined> {
  const first = messages[0];
  if (!first) return undefined;
  const { topic, partition } = first;
  if (messages.some((m) => m.topic !== topic || m.partition !== partition)) throw new Error('withAppliedOffsets takes the messages of one partition');
  const key = [group, topic, partition];
  return withTransaction(pool, async (client) => {
    // Create the row if it is the partition's first batch, so it can be locked even then.
    await client.query('INSERT INTO actor_offsets (group_id, topic, partition, "offset") VALUES ($1, $2, $3, -1) ON CONFLICT DO NOTHING', key);
    const { rows } = await client.query<{ offset: string }>(
      'SELECT "offset" FROM actor_offsets WHERE group_id = $1 AND topic = $2 AND partition = $3 FOR UPDATE',
      key,
    );
    const applied = BigInt(rows[0]!.offset);
    const fresh = messages.filter((m) => BigInt(m.offset) > applied);
    if (fresh.length === 0) return undefined;
    const result = await apply(client, fresh);
    const upTo = fresh.reduce((max, m) => (BigInt(m.offset) > max ? BigInt(m.offset) : max), applied);
    await client.query('UPDATE actor_offsets SET "offset" = $4 WHERE group_id = $1 AND topic = $2 AND partition = $3', [...key, upTo.toString()]);
    return result;
  });
}
