// Entry point of the ingress process.
import { ConfigError } from './platform/config.ts';
import { startPlatform } from './platform/platform.ts';
import { buildIngress } from './ingress.ts';
import { collectStartUpGarbage } from './platform/start-up-garbage.ts';
import { serveIngressMetrics } from './platform/metrics/operations-port.ts';
import { loadServiceConfig, serviceSealedColumns, serviceTopics } from './service.ts';

let config;
try {
  config = loadServiceConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  throw err;
}
const platform = await startPlatform(config, { name: 'ingress', topics: serviceTopics, sealed: serviceSealedColumns });
platform.shutdown.installSignalHandlers();
const app = await buildIngress(platform, config);
// Registered last, so closed first: in-flight requests finish and no new one arrives after the stores close.
platform.shutdown.add('http', () => app.close());
const address = await app.listen({ host: config.HTTP_HOST, port: config.HTTP_PORT });
await serveIngressMetrics(platform, app.outboxes);
platform.log.info({ address }, 'ingress listening');
collectStartUpGarbage();
