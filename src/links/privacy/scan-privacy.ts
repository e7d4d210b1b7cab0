// Erasure and retention of scans (issue 43, item 6). The API records erasures
// (scan_erasures, answered 202); this runner applies them, and the workspaces'
// retention once a day, in the scan sink's worker processes (its background):
// - a run takes every pending erasure at once, so however many there are it
//   costs one mutation of `scans`, one of `conversions` (a visitor's
//   conversions lose their scan and click IDs) and one per rollup: ClickHouse
//   18.16 reads every part of a table for a mutation (no partition pruning) and
//   rewrites whole each part that holds a matching row, so they are batched;
// - rollups cannot subtract (HLL sketches, countState), so the hours the erased
//   scans were counted in are recomputed (scan-rollups.ts): their rows deleted,
//   then rebuilt from the scans left. The scan sink is held meanwhile (its
//   per-partition locks), so no scan of those hours is counted twice;
// - retention drops a workspace's scans before a UTC midnight, and the rollup
//   rows before it, which hold exactly those scans: nothing to recompute;
// - one runner at a time (an advisory lock); each step is idempotent and the
//   hours are stored before any scan is deleted, so a run cut short is simply
//   run again.
import type pg from 'pg';
import type { BackgroundTask } from '../../platform/actors/worker-kind.ts';
import { Repeating } from '../../platform/background.ts';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { ident, inStrings, join, sql, type SqlFragment } from '../../platform/clickhouse/literal.ts';
import type { Logger } from '../../platform/logger.ts';
import { withAdvisoryLock } from '../../platform/postgres/advisory-lock.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { mutate, mutationsDone } from './mutations.ts';
import { bucketsWhere, refill, scanRollups, type AffectedHours } from './scan-rollups.ts';

export interface ScanPrivacyOptions {
  ch: ClickHouse;
  pg: Pool;
  log: Logger;
  /** The scan sink's per-partition lock names: held while rollup rows are recomputed. */
  sinkLocks: readonly string[];
  /** How often pending erasures are looked for (and whether retention is due). */
  intervalMs: number;
  /** How often retention runs (a day). */
  retentionEveryMs: number;
  /** How long a run waits for ClickHouse's mutations. */
  mutationTimeoutMs: number;
}

interface ErasureRow {
  id: string;
  workspace_id: string;
  kind: 'visitor' | 'link';
  scan_id: string | null;
  link_id: string | null;
  visitor_id: string | null;
  scan_ids: string[] | null;
  hours: Date[] | null;
  requested_at: Date;
}

const DAY = 86_400_000;
/** Erasures a run takes at most (one mutation each way whatever the number). */
const BATCH = 1000;
/** A click ID whose scan is not stored yet (still in Kafka) is looked for again this long, then given up. */
const SCAN_ARRIVAL_MS = 10 * 60_000;

export class ScanPrivacy {
  private readonly o: ScanPrivacyOptions;

  constructor(options: ScanPrivacyOptions) {
    this.o = options;
  }

  /** Applies every pending erasure; resolves to how many were done. */
  runErasures(): Promise<number> {
    return withAdvisoryLock(this.o.pg, 'links-scan-privacy', async () => {
      const { rows } = await this.o.pg.query<ErasureRow>('SELECT * FROM scan_erasures WHERE done_at IS NULL ORDER BY requested_at LIMIT $1', [BATCH]);
      const ready: ErasureRow[] = [];
      for (const row of rows) {
        const found = row.hours ? row : await this.find(row);
        if (found) ready.push(found);
      }
      if (ready.length === 0) return 0;
      await this.erase(ready);
      await this.o.pg.query('UPDATE scan_erasures SET done_at = now() WHERE id = ANY($1::uuid[])', [ready.map((r) => r.id)]);
      this.o.log.info({ erasures: ready.length }, 'scan erasures applied');
      return ready.length;
    });
  }

  /** Finds what an erasure covers and stores it (before anything is deleted); undefined to look again next run. */
  private async find(row: ErasureRow): Promise<ErasureRow | undefined> {
    let visitorId: string | null = null;
    if (row.kind === 'visitor') {
      const [scan] = await this.o.ch.rows<{ visitor_id: string }>(sql`SELECT visitor_id FROM scans WHERE workspace_id = ${row.workspace_id} AND scan_id = ${row.scan_id!} LIMIT 1`);
      if (!scan && Date.now() - row.requested_at.getTime() < SCAN_ARRIVAL_MS) return undefined;
      visitorId = scan?.visitor_id ?? null;
    }
    const where = this.scansOf({ ...row, visitor_id: visitorId });
    const scans = where ? await this.o.ch.rows<{ scan_id: string; hour: string }>(sql`SELECT scan_id, toUnixTimestamp(toStartOfHour(ts)) AS hour FROM scans WHERE ${where}`) : [];
    const hours = [...new Set(scans.map((s) => Number(s.hour)))].map((h) => new Date(h * 1000));
    const scanIds = row.kind === 'visitor' ? scans.map((s) => s.scan_id) : null;
    await this.o.pg.query('UPDATE scan_erasures SET visitor_id = $2, scan_ids = $3, hours = $4 WHERE id = $1', [row.id, visitorId, scanIds, hours]);
    return { ...row, visitor_id: visitorId, scan_ids: scanIds, hours };
  }

  /** The scans an erasure covers (undefined: none, a visitor whose scan never arrived). */
  private scansOf(row: Pick<ErasureRow, 'workspace_id' | 'kind' | 'link_id' | 'visitor_id'>): SqlFragment | undefined {
    if (row.kind === 'link') return sql`workspace_id = ${row.workspace_id} AND link_id = ${row.link_id!}`;
    return row.visitor_id === null ? undefined : sql`workspace_id = ${row.workspace_id} AND visitor_id = ${row.visitor_id}`;
  }

  private async erase(rows: readonly ErasureRow[]): Promise<void> {
    const { ch } = this.o;
    const scans = rows.flatMap((r) => this.scansOf(r) ?? []);
    if (scans.length > 0) await mutate(ch, 'scans', sql`DELETE WHERE ${join(scans.map((w) => sql`(${w})`), ' OR ')}`);
    // The erased scans' conversions stay (they are the workspace's revenue) but no longer name their
    // scans, so the funnel counts them as no scan's: a visitor's by their scan IDs, a link's by the link.
    const unlinked = rows.flatMap((r) => (r.scan_ids?.length ? [{ workspaceId: r.workspace_id, scanIds: r.scan_ids }] : []));
    const ofLinks = rows.flatMap((r) => (r.kind === 'link' ? [{ workspaceId: r.workspace_id, linkId: r.link_id! }] : []));
    if (unlinked.length + ofLinks.length > 0) {
      const conversions = [
        ...unlinked.map((u) => sql`(workspace_id = ${u.workspaceId} AND scan_id IN ${inStrings(u.scanIds)})`),
        ...ofLinks.map((l) => sql`(workspace_id = ${l.workspaceId} AND link_id = ${l.linkId} AND scan_id != '')`),
      ];
      await mutate(ch, 'conversions', sql`UPDATE scan_id = '', click_id = '' WHERE ${join(conversions, ' OR ')}`);
      for (const u of unlinked) {
        await this.o.pg.query(`UPDATE conversions SET record = record || '{"scanId": "", "clickId": ""}'::jsonb WHERE workspace_id = $1 AND record->>'scanId' = ANY($2)`, [u.workspaceId, u.scanIds]);
      }
      for (const l of ofLinks) {
        await this.o.pg.query(`UPDATE conversions SET record = record || '{"scanId": "", "clickId": ""}'::jsonb WHERE workspace_id = $1 AND record->>'linkId' = $2 AND record->>'scanId' != ''`, [l.workspaceId, l.linkId]);
      }
    }
    await mutationsDone(ch, ch.database, ['scans', 'conversions'], this.o.mutationTimeoutMs);
    await this.recompute(mergeHours(rows));
  }

  /** Deletes and rebuilds the rollup rows of these hours from the scans left, with the scan sink held. */
  private async recompute(affected: AffectedHours[]): Promise<void> {
    if (affected.length === 0) return;
    const { ch } = this.o;
    const rollups = await scanRollups(ch);
    await this.withSinkHeld(async () => {
      for (const rollup of rollups) await mutate(ch, rollup.table, sql`DELETE WHERE ${bucketsWhere(rollup, affected)}`);
      await mutationsDone(ch, ch.database, rollups.map((r) => r.table), this.o.mutationTimeoutMs);
      for (const rollup of rollups) await refill(ch, rollup, affected);
    });
  }

  /** Runs `fn` holding every partition lock of the scan sink (on one session; the sink takes one at a time, so no deadlock). */
  private async withSinkHeld(fn: () => Promise<void>): Promise<void> {
    const client: pg.PoolClient = await this.o.pg.connect();
    try {
      for (const name of this.o.sinkLocks) await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [name]);
      await fn();
    } finally {
      await client.query('SELECT pg_advisory_unlock_all()').catch(() => {});
      client.release();
    }
  }

  /**
   * Drops every workspace's scans older than its retention (from the UTC midnight that many days
   * before today), when a day has passed since the last pass (or `force`). Resolves to whether it ran.
   */
  runRetention(force = false): Promise<boolean> {
    return withAdvisoryLock(this.o.pg, 'links-scan-privacy', async () => {
      const { rows: [last] } = await this.o.pg.query<{ finished_at: Date }>("SELECT finished_at FROM scan_retention_runs WHERE name = 'scans'");
      if (!force && last && Date.now() - last.finished_at.getTime() < this.o.retentionEveryMs) return false;
      const { rows } = await this.o.pg.query<{ id: string; scan_retention_days: number }>('SELECT id, scan_retention_days FROM workspaces WHERE scan_retention_days IS NOT NULL');
      const today = Math.floor(Date.now() / DAY) * DAY;
      const cutoffs = rows.map((w) => ({ workspaceId: w.id, before: new Date(today - w.scan_retention_days * DAY) }));
      // Only workspaces that have such scans: a mutation reads every part of the table, so none when nothing is due.
      const due = cutoffs.length === 0 ? [] : await this.o.ch.rows<{ workspace_id: string }>(sql`
        SELECT DISTINCT workspace_id FROM scans WHERE ${join(cutoffs.map((c) => sql`(workspace_id = ${c.workspaceId} AND ts < ${c.before})`), ' OR ')}`);
      const dueSet = new Set(due.map((d) => d.workspace_id));
      const expired = cutoffs.filter((c) => dueSet.has(c.workspaceId));
      if (expired.length > 0) await this.dropBefore(expired);
      await this.o.pg.query("INSERT INTO scan_retention_runs (name, finished_at) VALUES ('scans', now()) ON CONFLICT (name) DO UPDATE SET finished_at = now()");
      this.o.log.info({ workspaces: expired.length }, 'scan retention applied');
      return true;
    });
  }

  private async dropBefore(expired: readonly { workspaceId: string; before: Date }[]): Promise<void> {
    const { ch } = this.o;
    const older = (time: string) => join(expired.map((e) => sql`(workspace_id = ${e.workspaceId} AND ${ident(time)} < ${e.before})`), ' OR ');
    const rollups = await scanRollups(ch);
    await mutate(ch, 'scans', sql`DELETE WHERE ${older('ts')}`);
    for (const rollup of rollups) await mutate(ch, rollup.table, sql`DELETE WHERE ${older(rollup.time)}`);
    await mutationsDone(ch, ch.database, ['scans', ...rollups.map((r) => r.table)], this.o.mutationTimeoutMs);
  }

  /** The runner as a worker kind's background: pending erasures every interval, retention when due. */
  background(): BackgroundTask {
    const repeating = new Repeating(async () => {
      try {
        await this.runErasures();
        await this.runRetention();
      } catch (err) {
        this.o.log.warn({ err }, 'scan privacy run failed; it is run again at the next interval');
      }
    }, this.o.intervalMs);
    return { start: () => repeating.start(), stop: () => repeating.stop() };
  }
}

/** The erasures' hours, one entry per workspace. */
function mergeHours(rows: readonly ErasureRow[]): AffectedHours[] {
  const by = new Map<string, Set<number>>();
  for (const r of rows) for (const h of r.hours ?? []) (by.get(r.workspace_id) ?? by.set(r.workspace_id, new Set()).get(r.workspace_id)!).add(h.getTime());
  return [...by].filter(([, hours]) => hours.size > 0).map(([workspaceId, hours]) => ({ workspaceId, hours: [...hours].sort().map((t) => new Date(t)) }));
}
