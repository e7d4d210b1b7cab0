// Entry point of the ingress process.
import './platform/compile-cache.ts'; // first: see there
import './platform/v8-settings.ts'; // before any thread starts: see there
import './platform/next-tick-shape.ts'; // keeps nextTick fast: see there

const { ConfigError } = await import('./platform/config.ts');
const { startPlatform } = await import('./platform/platform.ts');
const { StartUpError } = await import('./platform/start-up-checks.ts');
const { buildIngress } = await import('./ingress.ts');
const { collectStartUpGarbage } = await import('./platform/start-up-garbage.ts');
const { serveIngressMetrics } = await import('./platform/metrics/operations-port.ts');
const { loadServiceConfig, serviceSealedColumns, serviceTopics } = await import('./service.ts');

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
const platform = await startPlatform(config, { name: 'ingress', topics: serviceTopics, sealed: serviceSealedColumns }).catch((err: unknown) => {
  // A service refused the settings (a password, a certificate, TLS): said once, no stack, no retrying.
  if (!(err instanceof StartUpError)) throw err;
  console.error(`cannot start: ${err.message.replaceAll('\n', '; ')}`);
  process.exit(2);
});
platform.shutdown.installSignalHandlers();
const app = await buildIngress(platform, config);
// Registered last, so closed first: in-flight requests finish and no new one arrives after the stores close.
platform.shutdown.add('http', () => app.close());
const address = await app.listen({ host: config.HTTP_HOST, port: config.HTTP_PORT });
await serveIngressMetrics(platform, app.outboxes, app.gauges);
platform.log.info({ address }, 'ingress listening');
collectStartUpGarbage();
