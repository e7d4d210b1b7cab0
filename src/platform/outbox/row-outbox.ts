// An outbox kept as rows of its own table (one per item to publish, written in the
// same statement or transaction as the item). A publisher deletes the rows it
// publishes inside a transaction held across the Kafka send, and commits only once
// the send succeeded: the row locks keep two publishers (a request, a replay, the
// relay of any ingress) from publishing one item at once; a failed send or a
// publisher that dies rolls back and leaves the rows to the relay. A crash (of
// Postgres) after the send and before the commit publishes an item again: its
// consumers dedupe by id. The transactions run on a pool of their own that commits
// without waiting for the disk (losing a delete only republishes), so that a slow
// Kafka never holds the connections the product's requests need.
import type pg from 'pg';
import { Coalescer } from '../coalescer.ts';
import { isUuid } from '../http/validation.ts';
import type { Logger } from '../logger.ts';
import { outboxRelay } from './outbox-relay.ts';
import type { Outbox } from './outbox.ts';

export interface RowOutboxSource<R> {
  /** The topic fed, for logs. */
  name: string;
  /** The outbox table; its `id` column names the item, `created_at` when it was written. */
  table: string;
  idColumn: string;
  /** Reads the items to publish for these ids (from $1::uuid[]), in the order to publish them. */
  readItems: string;
  /** Publishes the items; throws when they are not on the topic. */
  send(items: R[]): Promise<void>;
}


/** Items taken by one relay run at most (the relay publishes them in batches of this size). */
const RELAY_BATCH = 100;

export class RowOutbox<R> {
  private readonly pool: pg.Pool;
  private readonly source: RowOutboxSource<R>;
  /** The relay's view of it, for startOutboxRelays. */
  readonly outbox: Outbox;
  private readonly soon: Coalescer<readonly string[], void>;

  constructor(
    pool: pg.Pool,
    source: RowOutboxSource<R>,
    log: Logger,
  ) {
    this.pool = pool;
    this.source = source;
    this.outbox = outboxRelay<string>({ name: source.name, pending: (ageMs, limit) => this.pending(ageMs, limit), publish: (ids) => this.publish(ids, false), idOf: (id) => id, batchSize: RELAY_BATCH, backlog: () => this.backlog() }, log);
    // Requests of one moment publish together: one transaction and one Kafka send for all.
    this.soon = new Coalescer<readonly string[], void>(async (batches) => {
      await this.publish(batches.flat(), false);
      return batches.map(() => ({ status: 'fulfilled' as const, value: undefined }));
    });
  }

  private async backlog(): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.source.table}`);
    return rows[0]!.n;
  }

  /** Publishes these ids with those of other callers of this moment; ids another publisher holds are left to it. */
  publishSoon(ids: readonly string[]): Promise<void> {
    return ids.length === 0 ? Promise.resolve() : this.soon.call(ids);
  }

  /**
   * Publishes these ids now. With `wait`, ids another publisher holds are waited for, so that
   * when this resolves each of them is on the topic (a replay answers only then).
   */
  async publish(ids: readonly string[], wait: boolean): Promise<void> {
    if (ids.length === 0) return;
    for (const id of ids) if (!isUuid(id)) throw new Error(`not a uuid: ${id}`);
    const { table, idColumn } = this.source;
    const client = await this.pool.connect();
    let broken: Error | undefined;
    // Postgres ending the transaction while the send waits is an 'error' event: the commit fails, the process goes on.
    const onError = (err: Error) => (broken ??= err);
    client.on('error', onError);
    try {
      // BEGIN and the delete in one round trip (ids checked above, so inlined). Rows are locked
      // in id order, so two waiting publishers never deadlock.
      const results = (await client.query(
        `BEGIN; DELETE FROM ${table} WHERE ${idColumn} IN (SELECT ${idColumn} FROM ${table} WHERE ${idColumn} = ANY('{${ids.join(',')}}'::uuid[])
           ORDER BY ${idColumn} FOR UPDATE${wait ? '' : ' SKIP LOCKED'}) RETURNING ${idColumn} AS id`,
      )) as unknown as pg.QueryResult<{ id: string }>[];
      const taken = results[1]!.rows.map((r) => r.id);
      if (taken.length > 0) {
        const { rows } = await client.query<R & object>(this.source.readItems, [taken]);
        await this.source.send(rows);
      }
      await client.query('COMMIT');
    } catch (err) {
      if (!broken) await client.query('ROLLBACK').catch(onError);
      throw err;
    } finally {
      client.off('error', onError);
      // A connection that could not roll back is closed, not reused.
      client.release(broken);
    }
  }

  /** Ids written more than `ageMs` ago and still to publish, oldest first. */
  private async pending(ageMs: number, limit: number): Promise<string[]> {
    const { table, idColumn } = this.source;
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT ${idColumn} AS id FROM ${table} WHERE created_at < now() - make_interval(secs => $1::double precision / 1000) ORDER BY created_at LIMIT $2`,
      [ageMs, limit],
    );
    return rows.map((r) => r.id);
  }
}
