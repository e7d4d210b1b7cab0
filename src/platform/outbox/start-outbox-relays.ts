// Repeats the relay of every registered outbox on an interval, each on its own
// timer so a slow outbox does not delay the others.
import { Repeating } from '../background.ts';
import type { Outbox } from './outbox.ts';

export interface OutboxRelayOptions {
  /** Only items older than this are relayed: younger ones are still being published by their request. */
  ageMs: number;
  intervalMs: number;
}

export const DEFAULT_OUTBOX_RELAY_OPTIONS: OutboxRelayOptions = { ageMs: 2000, intervalMs: 1000 };

export interface RunningRelays {
  /** Stops every relay and waits for runs in progress. */
  stop(): Promise<void>;
}

export function startOutboxRelays(outboxes: readonly Outbox[], options: OutboxRelayOptions = DEFAULT_OUTBOX_RELAY_OPTIONS): RunningRelays {
  const repeating = outboxes.map((outbox) => new Repeating(() => outbox.relayOnce(options.ageMs), options.intervalMs));
  for (const r of repeating) r.start();
  return {
    stop: async () => {
      await Promise.all(repeating.map((r) => r.stop()));
    },
  };
}
