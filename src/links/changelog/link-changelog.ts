// Publishes link changes to the compacted links.changelog topic from the
// transactional outbox. After a request commits, its links are published at
// once; the platform's outbox relay (`outbox`) republishes whatever a crash or
// a Kafka outage left in the outbox, one link at a time. No database
// connection is held while Kafka is waited on: the state is read, published,
// and then checked again: if the link changed meanwhile (another publisher may
// have sent an older state after ours), it is published again, so the last
// message of every key is the link's newest state.
//
// The process that publishes also tells its own listeners (the ingress's link
// cache) first, so a link written through an ingress redirects there with its
// new state as soon as the write is answered, without waiting for Kafka.
import { bestEffort } from '../../platform/background.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { Publisher } from '../../platform/kafka/publisher.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Outbox } from '../../platform/outbox/outbox.ts';
import { outboxRelay } from '../../platform/outbox/outbox-relay.ts';
import { linksChangelogTopic } from '../../../topics/links-changelog.ts';
import type { LinkRow } from '../short-links/link-store.ts';
import { linkKey, toLinkState, type LinkState } from './link-state.ts';

export class LinkChangelog {
  private readonly pg: Pool;
  private readonly publisher: Publisher;
  private readonly log: Logger;
  /** The outbox of link changes, for the platform to relay. */
  readonly outbox: Outbox;

  private readonly localListeners = new Set<(state: LinkState) => void>();

  constructor(
    pg: Pool,
    publisher: Publisher,
    log: Logger,
  ) {
    this.pg = pg;
    this.publisher = publisher;
    this.log = log;
    this.outbox = outboxRelay<string>(
      {
        name: 'links.changelog',
        pending: (ageMs, limit) => this.pendingLinks(ageMs, limit),
        publish: (linkIds) => this.publish(linkIds),
        idOf: (linkId) => linkId,
        // One link that fails must not hold up the others.
        batchSize: 1,
        backlog: async () => (await this.pg.query<{ n: number }>('SELECT count(DISTINCT link_id)::int AS n FROM link_changelog_outbox')).rows[0]!.n,
      },
      log,
    );
  }

  /** Called with each state this process is about to publish, before Kafka has it. */
  onLocalChange(listener: (state: LinkState) => void): () => void {
    this.localListeners.add(listener);
    return () => this.localListeners.delete(listener);
  }

  /** Publishes the current state of these links and clears their outbox rows. */
  async publish(linkIds: readonly string[]): Promise<void> {
    for (const id of new Set(linkIds)) await this.publishOne(id);
  }

  /** Publishes, but never fails the caller: what is not published now stays in the outbox for the relay. */
  async publishSoon(linkIds: readonly string[], timeoutMs = 2000): Promise<void> {
    await bestEffort(this.publish(linkIds), timeoutMs, (err) => this.log.warn({ err, linkIds }, 'changelog publish failed; the outbox relay will retry'));
  }

  private async publishOne(linkId: string): Promise<void> {
    for (let round = 0; round < 5; round++) {
      const pending = await this.pg.query<{ max: string | null }>('SELECT max(id) AS max FROM link_changelog_outbox WHERE link_id = $1', [linkId]);
      const upTo = pending.rows[0]?.max;
      if (upTo === null || upTo === undefined) return; // nothing pending: already published
      const { rows } = await this.pg.query<LinkRow>('SELECT * FROM links WHERE id = $1', [linkId]);
      const row = rows[0];
      if (row) {
        const state = toLinkState(row);
        for (const listener of this.localListeners) listener(state);
        await this.publisher.publish<LinkState>(linksChangelogTopic, [{ key: linkKey(row.domain_id, row.short_id), value: state }]);
      }
      await this.pg.query('DELETE FROM link_changelog_outbox WHERE link_id = $1 AND id <= $2', [linkId, upTo]);
      // Changed while we were publishing? Then a newer state is due (its outbox row says so): go again.
      const after = await this.pg.query<{ version: string }>('SELECT version FROM links WHERE id = $1', [linkId]);
      if (!row || after.rows[0]?.version === row.version) return;
      await this.pg.query('INSERT INTO link_changelog_outbox (link_id) VALUES ($1)', [linkId]);
    }
  }

  /** Links with outbox rows older than `ageMs`, the longest waiting first. */
  private async pendingLinks(ageMs: number, limit: number): Promise<string[]> {
    const { rows } = await this.pg.query<{ link_id: string }>(
      `SELECT link_id FROM link_changelog_outbox WHERE created_at < now() - make_interval(secs => $1::double precision / 1000)
        GROUP BY link_id ORDER BY min(id) LIMIT $2`,
      [ageMs, limit],
    );
    return rows.map((r) => r.link_id);
  }
}
