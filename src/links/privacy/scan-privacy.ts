// Erasure and retention of scans (issue 43, item 6). The API records erasures
// (scan_erasures, answered 202); this runner applies them, and the workspaces'
// retention once a day, in the scan sink's worker processes (its background):
// - a run takes every due erasure at once, so however many there are it
//   costs one mutation of `scans`, one of `conversions` (the erased scans'
//   conversions lose their scan, click and external IDs) and one per rollup:
//   ClickHouse 18.16 reads every part of a table for a mutation (no partition
//   pruning) and rewrites whole each part that holds a matching row, so they are
//   batched. If the batch fails, its erasures are tried one by one, so a failing
//   one fails alone: it is tried again after a growing delay (next_attempt_at,
//   taken in that order), then ends as `failed`, never holding up the others;
// - what an erasure covers is found as the scans' distinct hours (GROUP BY in
//   ClickHouse, not every scan into memory), and the hours go to ClickHouse as
//   ranges, so no query grows with the hours of a busy link (scan-rollups.ts);
// - erased data is also scrubbed where it was copied: the personal fields of
//   the stored scan.created (and conversion.created) webhook bodies, and the
//   conversions' external IDs;
// - rollups cannot subtract (HLL sketches, countState), so the hours the erased
//   scans were counted in are recomputed (scan-rollups.ts): their rows deleted,
//   then rebuilt from the scans left. The scan sink is held meanwhile (its
//   per-partition locks), so no scan of those hours is counted twice;
// - retention drops a workspace's scans before a UTC midnight, and the rollup
//   rows before it, which hold exactly those scans: nothing to recompute;
// - on ClickHouse replicas each replica applies a mutation in its own time, so
//   the rebuild's query leaves out the erased scans itself, reads scans with
//   sequential consistency and inserts with a quorum (scan-rollups.ts);
// - one runner at a time (an advisory lock); each step is idempotent and the
//   hours are stored before any scan is deleted, so a run cut short is simply
//   run again.
import type pg from 'pg';
import type { BackgroundTask } from '../../platform/actors/worker-kind.ts';
import { Repeating } from '../../platform/background.ts';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { ident, inStrings, join, sql, type SqlFragment } from '../../platform/clickhouse/literal.ts';
import { readYourWritesSettings } from '../../platform/clickhouse/replication.ts';
import type { Logger } from '../../platform/logger.ts';
import { withAdvisoryLock } from '../../platform/postgres/advisory-lock.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { mutate, mutationsDone } from './mutations.ts';
import { bucketsWhere, hourRanges, rebuildRollups, scanRollups, type AffectedHours } from './scan-rollups.ts';

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
  /** How long a visitor's erasure looks for its click ID's scan (still in Kafka) before it ends as not_found. */
  arrivalMs: number;
  /** Attempts of a failing erasure in all, before it ends as failed. */
  maxAttempts: number;
  /** Delay after failed attempt n: this × 2^(n-1), at most a day. */
  retryBaseMs: number;
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
  attempts: number;
}

const DAY = 86_400_000;
/** Erasures a run takes at most (one mutation each way whatever the number). */
const BATCH = 1000;
/** Hour ranges a run sends to ClickHouse at most, shared among its workspaces (each query's size stays bounded). */
const MAX_RANGES = 128;
/** The longest delay between attempts of a failing erasure. */
const MAX_RETRY_DELAY_MS = DAY;
/** The personal fields of a stored scan.created body, blanked by an erasure (what stays: ids, link, time, destination). */
const SCAN_BODY_SCRUB = { clickId: null, country: null, region: null, city: null, os: null, browser: null, referrer: null, referrerHost: null, userAgent: null, visitorId: null, utm: { source: null, medium: null, campaign: null, term: null, content: null } };
/** The same for a stored conversion.created body of an erased scan's conversion. */
const CONVERSION_BODY_SCRUB = { scanId: '', clickId: '', externalId: null };

export class ScanPrivacy {
  private readonly o: ScanPrivacyOptions;

  constructor(options: ScanPrivacyOptions) {
    this.o = options;
  }

  /** Applies every due erasure; resolves to how many were finished (done or not_found). */
  runErasures(): Promise<number> {
    return withAdvisoryLock(this.o.pg, 'links-scan-privacy', async () => {
      const { rows } = await this.o.pg.query<ErasureRow>(
        "SELECT * FROM scan_erasures WHERE status = 'pending' AND next_attempt_at <= now() ORDER BY next_attempt_at, requested_at LIMIT $1",
        [BATCH],
      );
      const ready: ErasureRow[] = [];
      let finished = 0;
      for (const row of rows) {
        try {
          const found = row.hours ? row : await this.find(row);
          if (found === 'not_found') {
            await this.o.pg.query("UPDATE scan_erasures SET status = 'not_found', done_at = now(), scans = 0 WHERE id = $1", [row.id]);
            finished++;
          } else if (found) ready.push(found);
        } catch (err) {
          await this.failed(row, err);
        }
      }
      if (ready.length === 0) return finished;
      try {
        await this.erase(ready);
      } catch (err) {
        // One of them may be the cause: each is tried alone, so the others are not held up by it.
        if (ready.length === 1) {
          await this.failed(ready[0]!, err);
          return finished;
        }
        // Those the batch finished before it failed are done already (their counts kept).
        const { rows: done } = await this.o.pg.query<{ id: string }>("SELECT id FROM scan_erasures WHERE id = ANY($1::uuid[]) AND status = 'done'", [ready.map((r) => r.id)]);
        const doneIds = new Set(done.map((d) => d.id));
        let alone = doneIds.size;
        for (const row of ready.filter((r) => !doneIds.has(r.id))) {
          try {
            await this.erase([row]);
            alone++;
          } catch (e) {
            await this.failed(row, e);
          }
        }
        this.o.log.info({ erasures: alone }, 'scan erasures applied');
        return finished + alone;
      }
      this.o.log.info({ erasures: ready.length }, 'scan erasures applied');
      return finished + ready.length;
    });
  }

  /** A failed attempt: tried again after base × 2^(attempts-1), or failed for good after the last. */
  private async failed(row: ErasureRow, err: unknown): Promise<void> {
    const attempts = row.attempts + 1;
    const message = String((err as Error)?.message ?? err).slice(0, 1000);
    const last = attempts >= this.o.maxAttempts;
    const delayMs = Math.min(this.o.retryBaseMs * 2 ** (attempts - 1), MAX_RETRY_DELAY_MS);
    await this.o.pg.query(
      `UPDATE scan_erasures SET attempts = $2, last_error = $3,
              status = CASE WHEN $4 THEN 'failed' ELSE status END, done_at = CASE WHEN $4 THEN now() ELSE done_at END,
              next_attempt_at = now() + $5 * interval '1 millisecond'
        WHERE id = $1`,
      [row.id, attempts, message, last, delayMs],
    );
    this.o.log.warn({ err, erasure: row.id, attempts, failed: last }, last ? 'scan erasure failed for good' : 'scan erasure failed; it is tried again later');
  }

  /**
   * Finds what an erasure covers and stores it (before anything is deleted): the scans' distinct
   * hours, counted in ClickHouse. undefined to look again next run; not_found for a visitor's click
   * ID whose scan did not arrive in time.
   */
  private async find(row: ErasureRow): Promise<ErasureRow | 'not_found' | undefined> {
    let visitorId: string | null = null;
    // On replicas: from one that holds every stored scan, so no scan the sink stored is left out.
    const settings = await readYourWritesSettings(this.o.ch, 'scans');
    if (row.kind === 'visitor') {
      const [scan] = await this.o.ch.rows<{ visitor_id: string }>(sql`SELECT visitor_id FROM scans WHERE workspace_id = ${row.workspace_id} AND scan_id = ${row.scan_id!} LIMIT 1`, { settings });
      if (!scan) return Date.now() - row.requested_at.getTime() < this.o.arrivalMs ? undefined : 'not_found';
      visitorId = scan.visitor_id;
    }
    const where = this.scansOf({ ...row, visitor_id: visitorId })!;
    const perHour = await this.o.ch.rows<{ hour: string; n: string }>(sql`SELECT toUnixTimestamp(toStartOfHour(ts)) AS hour, count() AS n FROM scans WHERE ${where} GROUP BY hour ORDER BY hour`, { settings });
    const hours = perHour.map((h) => new Date(Number(h.hour) * 1000));
    const scans = perHour.reduce((sum, h) => sum + Number(h.n), 0);
    // A visitor's scans are one browser's of one day: few. Their IDs name the conversions to unlink.
    const scanIds = row.kind === 'visitor' ? (await this.o.ch.rows<{ scan_id: string }>(sql`SELECT scan_id FROM scans WHERE ${where}`, { settings })).map((s) => s.scan_id) : null;
    await this.o.pg.query('UPDATE scan_erasures SET visitor_id = $2, scan_ids = $3, hours = $4, scans = $5 WHERE id = $1', [row.id, visitorId, scanIds, hours, scans]);
    return { ...row, visitor_id: visitorId, scan_ids: scanIds, hours };
  }

  /** The scans an erasure covers (undefined: none, a visitor whose scan never arrived). */
  private scansOf(row: Pick<ErasureRow, 'workspace_id' | 'kind' | 'link_id' | 'visitor_id'>): SqlFragment | undefined {
    if (row.kind === 'link') return sql`workspace_id = ${row.workspace_id} AND link_id = ${row.link_id!}`;
    return row.visitor_id === null ? undefined : sql`workspace_id = ${row.workspace_id} AND visitor_id = ${row.visitor_id}`;
  }

  /** Applies these erasures and marks them done, with what they scrubbed. */
  private async erase(rows: readonly ErasureRow[]): Promise<void> {
    const { ch } = this.o;
    const affected = affectedHours(rows);
    // The rollups' deletions made first, so hours ClickHouse cannot hold fail the erasure before it
    // deletes anything: each mutation costs a round over every part (on replicas, of each replica).
    for (const time of ['hour', 'day'] as const) if (affected.length > 0) bucketsWhere({ time }, affected);
    const scans = rows.flatMap((r) => this.scansOf(r) ?? []);
    const erased = scans.length > 0 ? join(scans.map((w) => sql`(${w})`), ' OR ') : undefined;
    if (erased) await mutate(ch, 'scans', sql`DELETE WHERE ${erased}`);
    // The erased scans' conversions stay (they are the workspace's revenue) but no longer name their
    // scans (the funnel counts them as no scan's) nor carry their external IDs (an order or customer
    // id): a visitor's by their scan IDs, a link's by the link.
    const unlinked = rows.flatMap((r) => (r.scan_ids?.length ? [{ workspaceId: r.workspace_id, scanIds: r.scan_ids }] : []));
    const ofLinks = rows.flatMap((r) => (r.kind === 'link' ? [{ workspaceId: r.workspace_id, linkId: r.link_id! }] : []));
    if (unlinked.length + ofLinks.length > 0) {
      const conversions = [
        ...unlinked.map((u) => sql`(workspace_id = ${u.workspaceId} AND scan_id IN ${inStrings(u.scanIds)})`),
        ...ofLinks.map((l) => sql`(workspace_id = ${l.workspaceId} AND link_id = ${l.linkId} AND (scan_id != '' OR external_id != ''))`),
      ];
      await mutate(ch, 'conversions', sql`UPDATE scan_id = '', click_id = '', external_id = '' WHERE ${join(conversions, ' OR ')}`);
    }
    await mutationsDone(ch, ch.database, ['scans', 'conversions'], this.o.mutationTimeoutMs);
    await this.recompute(affected, erased);
    for (const row of rows) {
      const { conversions, deliveries } = await this.scrubPostgres(row);
      await this.o.pg.query("UPDATE scan_erasures SET status = 'done', done_at = now(), conversions = $2, deliveries = $3 WHERE id = $1", [row.id, conversions, deliveries]);
    }
  }

  /**
   * The copies of an erasure's scans in Postgres: its conversions lose their scan, click and external
   * IDs; the stored webhook bodies of its scans (scan.created) and of those conversions
   * (conversion.created) lose their personal fields. Counts what it changed (idempotent: a run
   * again finds them changed and counts nothing more).
   */
  private async scrubPostgres(row: ErasureRow): Promise<{ conversions: number; deliveries: number }> {
    const { pg } = this.o;
    const byVisitor = row.kind === 'visitor';
    if (byVisitor && !row.scan_ids?.length) return { conversions: 0, deliveries: 0 };
    const ofScans = byVisitor ? "record->>'scanId' = ANY($2)" : "record->>'linkId' = $2";
    const key = byVisitor ? row.scan_ids : row.link_id;
    const { rows: converted } = await pg.query<{ id: string }>(
      `UPDATE conversions SET external_id = NULL, record = record || '{"scanId": "", "clickId": "", "externalId": null}'::jsonb
        WHERE workspace_id = $1 AND ${ofScans} AND (record->>'scanId' != '' OR external_id IS NOT NULL) RETURNING id`,
      [row.workspace_id, key],
    );
    const scanBodies = byVisitor ? "scan_id = ANY($2::uuid[])" : "body::jsonb->'data'->>'linkId' = $2";
    const scanned = await pg.query(
      `UPDATE webhook_deliveries SET body = jsonb_set(body::jsonb, '{data}', (body::jsonb->'data') || $3::jsonb)::text, updated_at = now()
        WHERE workspace_id = $1 AND event_type = 'scan.created' AND ${scanBodies} AND body::jsonb->'data'->>'visitorId' IS NOT NULL`,
      [row.workspace_id, key, JSON.stringify(SCAN_BODY_SCRUB)],
    );
    // A conversion's delivery: by its conversion ID (the delivery's event ID), whether or not its conversion was changed just now.
    const conversionBodies = byVisitor ? "body::jsonb->'data'->>'scanId' = ANY($2)" : "body::jsonb->'data'->>'linkId' = $2";
    const conversionDeliveries = await pg.query(
      `UPDATE webhook_deliveries SET body = jsonb_set(body::jsonb, '{data}', (body::jsonb->'data') || $3::jsonb)::text, updated_at = now()
        WHERE workspace_id = $1 AND event_type = 'conversion.created' AND ${conversionBodies} AND (body::jsonb->'data'->>'scanId' != '' OR body::jsonb->'data'->>'externalId' IS NOT NULL)`,
      [row.workspace_id, key, JSON.stringify(CONVERSION_BODY_SCRUB)],
    );
    return { conversions: converted.length, deliveries: (scanned.rowCount ?? 0) + (conversionDeliveries.rowCount ?? 0) };
  }

  /** Deletes and rebuilds the rollup rows of these hours from the scans left, with the scan sink held. */
  private async recompute(affected: AffectedHours[], erased: SqlFragment | undefined): Promise<void> {
    if (affected.length === 0) return;
    await this.withSinkHeld(() => rebuildRollups(this.o.ch, affected, this.o.mutationTimeoutMs, erased));
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

/** The erasures' hours, one entry per workspace, as at most MAX_RANGES ranges in all. */
function affectedHours(rows: readonly ErasureRow[]): AffectedHours[] {
  const by = new Map<string, number[]>();
  for (const r of rows) for (const h of r.hours ?? []) (by.get(r.workspace_id) ?? by.set(r.workspace_id, []).get(r.workspace_id)!).push(h.getTime());
  const each = Math.max(1, Math.floor(MAX_RANGES / Math.max(1, by.size)));
  return [...by].filter(([, hours]) => hours.length > 0).map(([workspaceId, hours]) => ({ workspaceId, ranges: hourRanges(hours, each) }));
}
