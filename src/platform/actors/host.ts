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
          sessionTimeoutMs: platform.config.ACTOR_SESSION_TIMEOUT_MS,
          // A consumer stopped for good fails the process: it shuts down and exits 1 for its supervisor to restart.
          onFailed: (group, error) => platform.shutdown.fail(`consumer ${group}`, error),
        },
        kind,
      ),
  );
  for (const [i, runtime] of runtimes.entries()) {
    // Background work needs no partitions, so it starts before the group join (which can wait out a dead member's session).
    kinds[i]!.background?.start();
    await runtime.start();
  }
  // All stop together: a consumer's disconnect can wait out a fetch (up to 5 s), and one after another they would
  // outlast the shutdown timeout. Consumers stop before the producer and stores close (shutdown runs in reverse).
  platform.shutdown.add('workers', () =>
    Promise.all([...runtimes.map((runtime) => runtime.stop()), ...kinds.map((kind) => kind.background?.stop())]),
  );
  return runtimes;
}
