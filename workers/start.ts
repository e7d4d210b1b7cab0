// Starts a worker process hosting the named kinds, with graceful shutdown on SIGTERM/SIGINT.
import { hostWorkers } from '../src/platform/actors/host.ts';
import { loadConfig } from '../src/platform/config.ts';
import { startPlatform } from '../src/platform/platform.ts';
import { workerKinds } from './kinds.ts';
import { linkTopics } from '../topics/links.ts';

export async function startWorkerProcess(name: string, kindNames: readonly string[]): Promise<void> {
  const unknown = kindNames.filter((k) => !workerKinds[k]);
  if (unknown.length > 0) {
    console.error(`unknown worker kind(s): ${unknown.join(', ')}; kinds: ${Object.keys(workerKinds).join(', ')}`);
    process.exit(2);
  }
  const config = loadConfig();
  const platform = await startPlatform(config, { name, topics: linkTopics });
  platform.shutdown.installSignalHandlers();
  const kinds = kindNames.map((k) => workerKinds[k]!(platform));
  await hostWorkers(platform, kinds);
  platform.log.info({ kinds: kindNames }, 'worker process ready');
}
