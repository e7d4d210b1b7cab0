// Keeps the link cache right while links.changelog cannot: every few seconds the
// ingress asks Postgres (the system of record) for the links changed since its
// last look and applies them, so a link deleted, deactivated or changed through
// another ingress stops or changes here within one interval even when Kafka is
// down or this ingress's consumer is stuck. One indexed query per interval per
// ingress (links_updated_at, migration 024); a redirect still never waits on it.
//
// `updated_at` is the time the writing transaction began, so a change can commit
// after a look that ran later than its time: each look starts OVERLAP_MS before
// the previous one's Postgres clock, and a change re-read is a no-op (apply keeps
// the newest version).
import type { Pool } from '../../platform/postgres/pool.ts';
import type { Logger } from '../../platform/logger.ts';
import { linkKey, toLinkState } from '../changelog/link-state.ts';
import type { LinkRow } from '../short-links/link-store.ts';
import type { LinkCache } from './link-cache.ts';

/** Longer than any link-writing transaction takes (the longest waits about 2 s on a scan count). */
const OVERLAP_MS = 60_000;
/** Rows read per query; a look pages through more. */
const PAGE = 1000;

export class LinkRevalidator {
  private readonly pg: Pool;
  private readonly cache: LinkCache;
  private readonly intervalMs: number;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private since: Date | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Looks completed (tests and metrics). */
  looks = 0;

  constructor(
    pg: Pool,
    cache: LinkCache,
    intervalMs: number,
    log: Logger,
  ) {
    this.pg = pg;
    this.cache = cache;
    this.intervalMs = intervalMs;
    this.log = log;
  }

  /** Starts looking every interval, from the Postgres clock of now (the changelog brought the cache up to here). */
  async start(): Promise<void> {
    this.since = (await this.pg.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.look()
        .catch((err: unknown) => this.log.warn({ err }, 'link revalidation failed; tried again next interval'))
        .finally(() => {
          this.running = undefined;
          this.schedule();
        });
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Applies every link changed since the last look (less the overlap). */
  async look(): Promise<void> {
    const from = new Date(this.since!.getTime() - OVERLAP_MS);
    let after: { at: Date; id: string } | undefined;
    let now: Date | undefined;
    for (;;) {
      const { rows } = await this.pg.query<LinkRow & { looked_at: Date }>(
        `SELECT *, now() AS looked_at FROM links
          WHERE updated_at >= $1 AND ($2::timestamptz IS NULL OR (updated_at, id) > ($2, $3::uuid))
          ORDER BY updated_at, id LIMIT ${PAGE}`,
        [from, after?.at ?? null, after?.id ?? null],
      );
      now ??= rows[0]?.looked_at;
      for (const row of rows) {
        // Most rows are the overlap's, already known: only a newer version (or an unknown link) is applied.
        const known = this.cache.get(linkKey(row.domain_id, row.short_id));
        if (!known || known.id !== row.id || known.version < Number(row.version)) this.cache.apply(toLinkState(row));
      }
      if (rows.length < PAGE) break;
      const last = rows[rows.length - 1]!;
      after = { at: last.updated_at, id: last.id };
    }
    // No row: the clock is asked alone (the next look must still move on).
    this.since = now ?? (await this.pg.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
    this.looks++;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
