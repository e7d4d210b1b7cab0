// Closes the live streams of revoked keys: every interval, one query for the keys that hold
// streams on this ingress (whichever ingress revoked them), so a revoked key's streams end
// within about the interval. A workspace moved off the plans that give API access (canUseApi,
// as API_PLANS) counts as revoked too.
import type { Logger } from '../../platform/logger.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { API_PLANS } from '../workspaces/plans.ts';

export class KeyWatch {
  private readonly pg: Pool;
  private readonly log: Logger;
  private readonly watched = new Map<string, Set<() => void>>();
  private readonly timer: NodeJS.Timeout;
  private running = false;

  constructor(pg: Pool, log: Logger, intervalMs: number) {
    this.pg = pg;
    this.log = log;
    this.timer = setInterval(() => void this.check(), intervalMs);
    this.timer.unref();
  }

  /** Calls `onRevoked` once the key is found revoked; the returned function stops watching. */
  watch(keyId: string, onRevoked: () => void): () => void {
    let set = this.watched.get(keyId);
    if (!set) this.watched.set(keyId, (set = new Set()));
    set.add(onRevoked);
    return () => {
      set.delete(onRevoked);
      if (set.size === 0 && this.watched.get(keyId) === set) this.watched.delete(keyId);
    };
  }

  private async check(): Promise<void> {
    if (this.running || this.watched.size === 0) return;
    this.running = true;
    try {
      const { rows } = await this.pg.query<{ id: string }>(
        `SELECT k.id FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
          WHERE k.id = ANY($1::uuid[]) AND (k.revoked_at IS NOT NULL OR w.plan <> ALL($2::text[]))`,
        [[...this.watched.keys()], API_PLANS],
      );
      for (const { id } of rows) {
        const listeners = this.watched.get(id);
        this.watched.delete(id);
        for (const listener of listeners ?? []) listener();
      }
    } catch (err) {
      this.log.warn({ err }, 'live streams: could not check for revoked keys');
    } finally {
      this.running = false;
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
