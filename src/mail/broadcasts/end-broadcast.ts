// How the worker ends a broadcast that cannot go on: `canceled`, the spec's state
// for a broadcast stopped before all its mail was made (messages already queued
// still go out), with the reason in `stats.reason`, the spec's place for "the
// worker ended the broadcast itself". Not `sent`: that would claim everyone got
// it. The sender fixes the cause and creates a new broadcast (a canceled one
// cannot be sent again, nor resent).
import type { PoolClient } from 'pg';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import * as state from './broadcast-state.ts';

/**
 * Ends the broadcast canceled with `reason`. Recipients still waiting for an A/B winner are
 * skipped with the same reason, so `stats.queued` counts only messages that go out; the
 * pending jobs are removed.
 */
export async function endCanceled(db: PoolClient, broadcastId: string, reason: string): Promise<void> {
  const { rowCount } = await db.query("UPDATE mail_broadcast_recipients SET state = 'skipped', reason = $2 WHERE broadcast_id = $1 AND state = 'waiting'", [broadcastId, reason.slice(0, 300)]);
  await state.canceledWithReason(db, broadcastId, reason, rowCount ?? 0);
}

/**
 * After an error that retrying would not fix (a statement Postgres refuses, a bug): the broadcast,
 * if the worker still has it (sending or testing), ends canceled with the error in its reason.
 * False when it was not the worker's to end.
 */
export async function endAfterFailure(pg: Pool, broadcastId: string, error: Error): Promise<boolean> {
  return withTransaction(pg, async (db) => {
    const b = await state.lock(db, broadcastId);
    if (b?.status !== 'sending' && b?.status !== 'testing') return false;
    const what = error.message.replace(/\s+/g, ' ').slice(0, 300);
    await endCanceled(db, broadcastId, `The fan-out stopped on an error that retrying would not fix: ${what}. Messages already queued still go out. Fix the cause (the segment or the content, say) and create a new broadcast.`);
    return true;
  });
}
