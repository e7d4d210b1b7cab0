// Starts a worker process hosting the given kinds, with graceful shutdown on SIGTERM/SIGINT.
import { hostWorkers } from '../src/platform/actors/host.ts';
import type { WorkerKind } from '../src/platform/actors/worker-kind.ts';
import { loadConfig } from '../src/platform/config.ts';
import { startPlatform } from '../src/platform/platform.ts';
import type { TopicDefinition } from '../topics/index.ts';

export async function startWorkerProcess(name: string, kinds: readonly WorkerKind[], topics?: readonly TopicDefinition[]): Promise<void> {
  const config = loadConfig();
  const platform = await startPlatform(config, { name, ...(topics ? { topics } : {}) });
  platform.shutdown.installSignalHandlers();
  await hostWorkers(platform, kinds);
  platform.log.info({ kinds: kinds.map((k) => k.kind) }, 'worker process ready');
}
