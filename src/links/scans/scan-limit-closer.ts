// Closes links that reached their scan limit, from the scans the scan sink has
// just stored. It runs after each batch is in ClickHouse and before the batch's
// offsets are committed, so a crash between the insert and the closing replays
// the batch (whose scans are then stored already) and closes then: nothing is
// lost, and closing twice changes nothing. The closed state reaches every
// ingress through links.changelog.
//
// Cost: one Postgres lookup by primary key per batch (which of its links have an
// open limit); ClickHouse is asked only for those.
import type { Logger } from '../../platform/logger.ts';
import type { LinkChangelog } from '../changelog/link-changelog.ts';
import type { LinkStore } from '../short-links/link-store.ts';
import type { LifetimeScans } from './lifetime-scans.ts';
import type { ScanEvent } from './scan-event.ts';

export class ScanLimitCloser {
  private readonly links: LinkStore;
  private readonly lifetimeScans: LifetimeScans;
  private readonly changelog: LinkChangelog;
  private readonly log: Logger;

  constructor(
    links: LinkStore,
    lifetimeScans: LifetimeScans,
    changelog: LinkChangelog,
    log: Logger,
  ) {
    this.links = links;
    this.lifetimeScans = lifetimeScans;
    this.changelog = changelog;
    this.log = log;
  }

  /** Called with every scan of a batch once they are all stored (replays included). */
  async afterStored(scans: readonly ScanEvent[]): Promise<void> {
    const limited = await this.links.limitedOpen(scans.map((s) => s.linkId));
    if (limited.length === 0) return;
    const counts = await this.lifetimeScans.count(limited);
    // Only those at their limit go to Postgres: most batches close nothing and need no transaction.
    const reached = new Map(limited.flatMap((l) => (counts.get(l.id)! >= l.scanLimit ? [[l.id, counts.get(l.id)!] as const] : [])));
    const closed = (await this.links.closeAtLimit(reached)).map((r) => r.id);
    if (closed.length === 0) return;
    this.log.info({ linkIds: closed }, 'links closed at their scan limit');
    // Committed: publish now (the outbox relay covers a failure here).
    await this.changelog.publishSoon(closed);
  }
}
