// Hosts one or more worker kinds in a process, on the platform's clients.
import type { Platform } from '../platform.ts';
import { WorkerRuntime } from './runtime.ts';
import type { WorkerKind } from './worker-kind.ts';

export async function hostWorkers(platform: Platform, kinds: readonly WorkerKind[]): Promise<WorkerRuntime<unknown, unknown>[]> {
  const runtimes = kinds.map(
    (kind) =>
      new WorkerRuntime(
        {
          kafka: platform.kafka,
          registry: platform.registry,
          publisher: platform.publisher,
          log: platform.log,
          topicPrefix: platform.config.TOPIC_PREFIX,
          defaultMaxAttempts: platform.config.ACTOR_MAX_ATTEMPTS,
          defaultRetryBaseMs: platform.config.ACTOR_RETRY_BASE_MS,
        },
        kind,
      ),
  );
  for (const [i, runtime] of runtimes.entries()) {
    // Background work needs no partitions, so it starts before the group join (which can wait out a dead member's session).
    const background = kinds[i]!.background;
    if (background) {
      background.start();
      platform.shutdown.add(`worker:${runtime.group}:background`, () => background.stop());
    }
    await runtime.start();
    // Consumers stop before the producer and stores close (shutdown runs in reverse).
    platform.shutdown.add(`worker:${runtime.group}`, () => runtime.stop());
  }
  return runtimes;
}
