// Reads the dead-letters topic of this test run, as any consumer would.
import type { DeadLetter } from '../../src/platform/actors/dead-letter.ts';
import type { Config } from '../../src/platform/config.ts';
import { readTopic } from './topic-reader.ts';

/** Collects dead letters until `until` is satisfied or the timeout passes. */
export async function readDeadLetters(config: Config, until: (letters: DeadLetter[]) => boolean, timeoutMs = 30_000): Promise<DeadLetter[]> {
  const messages = await readTopic<DeadLetter>(config, 'dead-letters', (m) => until(m.map((x) => x.value)), timeoutMs);
  return messages.map((m) => m.value);
}
