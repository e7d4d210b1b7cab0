// Starts a worker process hosting the named kinds, with graceful shutdown on SIGTERM/SIGINT.
import '../src/platform/next-tick-shape.ts'; // keeps nextTick fast: see there
import { hostWorkers } from '../src/platform/actors/host.ts';
import { serveWorkerMetrics } from '../src/platform/metrics/operations-port.ts';
import { ConfigError } from '../src/platform/config.ts';
import { startPlatform } from '../src/platform/platform.ts';
import { StartUpError } from '../src/platform/start-up-checks.ts';
import { collectStartUpGarbage } from '../src/platform/start-up-garbage.ts';
import { wireLinks } from '../src/links/wiring.ts';
import { wireMail } from '../src/mail/wiring.ts';
import { loadServiceConfig, serviceSealedColumns, serviceTopics } from '../src/service.ts';
import { currentKindName, deprecatedKindNames, workerKinds } from './kinds.ts';

export async function startWorkerProcess(name: string, givenNames: readonly string[]): Promise<void> {
  const unknown = givenNames.filter((k) => !currentKindName(k));
  if (unknown.length > 0) {
    console.error(`unknown worker kind(s): ${unknown.join(', ')}; kinds: ${Object.keys(workerKinds).join(', ')}`);
    process.exit(2);
  }
  const deprecated = givenNames.filter((k) => Object.hasOwn(deprecatedKindNames, k));
  const kindNames = [...new Set(givenNames.map((k) => currentKindName(k)!))];
  let config;
  try {
    config = loadServiceConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    process.exit(2);
  }
  const platform = await startPlatform(config, { name, topics: serviceTopics, sealed: serviceSealedColumns }).catch((err: unknown) => {
    // A service refused the settings (a password, a certificate, TLS): said once, no stack, no retrying.
    if (!(err instanceof StartUpError)) throw err;
    console.error(`cannot start: ${err.message.replaceAll('\n', '; ')}`);
    process.exit(2);
  });
  platform.shutdown.installSignalHandlers();
  for (const old of deprecated) {
    platform.log.warn({ kind: old, use: deprecatedKindNames[old] }, `worker kind "${old}" is deprecated and will be removed in the next release; run "${deprecatedKindNames[old]}" (same consumer group)`);
  }
  const services = { platform, config, links: wireLinks(platform, config), mail: wireMail(platform, config) };
  const kinds = kindNames.map((k) => workerKinds[k]!(services));
  const runtimes = await hostWorkers(platform, kinds);
  await serveWorkerMetrics(platform, runtimes, kinds);
  platform.log.info({ kinds: kindNames }, 'worker process ready');
  collectStartUpGarbage();
}
