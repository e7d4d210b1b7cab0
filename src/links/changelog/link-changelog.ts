// Publishes link changes to the compacted links.changelog topic from the
// transactional outbox. After a request commits, its links are published at
// once; a relay republishes whatever a crash or a Kafka outage left in the
// outbox. Each link is published under a per-link advisory lock with the state
// read inside that lock, so the last message of a key is always its newest
// state, even when several processes publish the same link at once.
import type { Pool } from '../../platform/postgres/pool.ts';
import type { Publisher } from '../../platform/kafka/publisher.ts';
import type { Logger } from '../../platform/logger.ts';
import { linksChangelogTopic } from '../../../topics/links-changelog.ts';
import type { LinkRow } from '../links/link-store.ts';
import { toLinkState, type LinkState } from './link-state.ts';

export class LinkChangelog {
  private relayTimer: NodeJS.Timeout | undefined;
  private relayRunning: Promise<void> | undefined;

  constructor(
    private readonly pg: Pool,
    private readonly publisher: Publisher,
    private readonly log: Logger,
  ) {}

  /** Publishes the current state of these links and clears their outbox rows. */
  async publish(linkIds: readonly string[]): Promise<void> {
    for (const id of new Set(linkIds)) await this.publishOne(id);
  }

  /** Publishes, but never fails the caller: what is not published now stays in the outbox for the relay. */
  async publishSoon(linkIds: readonly string[], timeoutMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([this.publish(linkIds), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    } catch (err) {
      this.log.warn({ err, linkIds }, 'changelog publish failed; the outbox relay will retry');
    } finally {
      clearTimeout(timer);
    }
  }

  private async publishOne(linkId: string): Promise<void> {
    const client = await this.pg.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [linkId]);
      const pending = await client.query<{ max: string | null }>('SELECT max(id) AS max FROM link_changelog_outbox WHERE link_id = $1', [linkId]);
      const upTo = pending.rows[0]?.max;
      if (upTo === null || upTo === undefined) {
        // Someone else already published it.
        await client.query('COMMIT');
        return;
      }
      const { rows } = await client.query<LinkRow>('SELECT * FROM links WHERE id = $1', [linkId]);
      const row = rows[0];
      if (row) await this.publisher.publish<LinkState>(linksChangelogTopic, [{ key: row.short_id, value: toLinkState(row) }]);
      await client.query('DELETE FROM link_changelog_outbox WHERE link_id = $1 AND id <= $2', [linkId, upTo]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  /** Republishes outbox rows older than `ageMs` every `intervalMs`. */
  startRelay(intervalMs = 1000, ageMs = 2000): void {
    this.relayTimer = setInterval(() => {
      this.relayRunning ??= this.relayOnce(ageMs).finally(() => (this.relayRunning = undefined));
    }, intervalMs);
    this.relayTimer.unref();
  }

  async stopRelay(): Promise<void> {
    clearInterval(this.relayTimer);
    await this.relayRunning;
  }

  async relayOnce(ageMs = 0): Promise<void> {
    try {
      const { rows } = await this.pg.query<{ link_id: string }>(
        `SELECT link_id FROM link_changelog_outbox WHERE created_at < now() - make_interval(secs => $1::double precision / 1000)
          GROUP BY link_id ORDER BY min(id) LIMIT 500`,
        [ageMs],
      );
      if (rows.length > 0) {
        await this.publish(rows.map((r) => r.link_id));
        this.log.info({ links: rows.length }, 'changelog relay published pending link changes');
      }
    } catch (err) {
      this.log.warn({ err }, 'changelog relay failed; will retry');
    }
  }
}
