// Exponential backoff with jitter, for handler retries.

/** Delay before retry number `attempt` (1 = first retry): base·2^(attempt-1), capped, ±20% jitter. */
export function backoffDelay(attempt: number, baseMs: number, capMs = 30_000): number {
  const exact = Math.min(capMs, baseMs * 2 ** (attempt - 1));
  return Math.round(exact * (0.8 + Math.random() * 0.4));
}

/** Sleeps in short slices, calling `tick` between them (heartbeats), and stops early when `stillWanted` turns false. */
export async function sleepWithHeartbeat(ms: number, tick: () => Promise<void>, stillWanted: () => boolean): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!stillWanted()) return false;
    await new Promise((r) => setTimeout(r, Math.min(1000, end - Date.now())));
    await tick();
  }
  return stillWanted();
}
