// The A/B decision: per variant of the test share, the messages opened (an open or
// a click counts) or clicked, over the messages delivered. B wins only with a
// strictly higher rate; a tie, or no delivered message to judge by, goes to A.
import type { PoolClient } from 'pg';
import { broadcastCounts } from './broadcast-report.ts';
import type { BroadcastRow } from './broadcasts.ts';
import * as state from './broadcast-state.ts';

export interface VariantScore {
  variant: 'A' | 'B';
  delivered: number;
  opened: number;
  clicked: number;
}

/** The test share's counts per variant (the report's counters). */
export async function scoreVariants(db: PoolClient, broadcastId: string): Promise<VariantScore[]> {
  const counts = await broadcastCounts(db, broadcastId);
  return (['A', 'B'] as const).filter((v) => counts.has(v)).map((variant) => ({ variant, ...counts.get(variant)! }));
}

export function pickWinner(b: Pick<BroadcastRow, 'ab_test'>, scores: VariantScore[]): 'A' | 'B' {
  const rate = (variant: 'A' | 'B') => {
    const s = scores.find((x) => x.variant === variant);
    if (!s || s.delivered === 0) return 0;
    return (b.ab_test?.metric === 'clicks' ? s.clicked : s.opened) / s.delivered;
  };
  return rate('B') > rate('A') ? 'B' : 'A';
}

/** Writes the winner of a testing broadcast and turns it to sending its rest; false when it is not testing. */
export async function decide(db: PoolClient, broadcastId: string): Promise<boolean> {
  const b = await state.lock(db, broadcastId);
  if (!b || b.status !== 'testing') return false;
  await state.winnerDecided(db, broadcastId, pickWinner(b, await scoreVariants(db, broadcastId)));
  return true;
}
