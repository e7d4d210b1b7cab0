// What each kind of process serves on its operations port (metrics-server.ts):
// the ingress its outboxes' backlog; a worker process its consumer groups' lag,
// its kinds' own gauges, and /readyz (are its consumers in their groups, and how
// far behind are they).
import type { Registry } from 'prom-client';
import type { Outbox } from '../outbox/outbox.ts';
import type { Platform } from '../platform.ts';
import type { WorkerRuntime } from '../actors/runtime.ts';
import type { WorkerKind } from '../actors/worker-kind.ts';
import { consumerLag } from './consumer-lag.ts';
import { startMetricsServer, type MetricsServer } from './metrics-server.ts';
import { consumerLagGauge, outboxBacklogGauge } from './scrape-gauges.ts';

export const INGRESS_METRICS_PORT = 9464;
export const WORKER_METRICS_PORT = 9465;

/** METRICS_PORT, or the process kind's default; undefined when the operator turned it off (-1). */
function portOf(platform: Platform, fallback: number): number | undefined {
  const port = platform.config.METRICS_PORT ?? fallback;
  return port < 0 ? undefined : port;
}

async function serve(platform: Platform, port: number | undefined, options: Omit<Parameters<typeof startMetricsServer>[0], 'host' | 'port' | 'log'>): Promise<MetricsServer | undefined> {
  if (port === undefined) return undefined;
  const server = await startMetricsServer({ host: platform.config.METRICS_HOST, port, log: platform.log, ...options });
  platform.shutdown.add('metrics', () => server.close());
  return server;
}

/** `gauges`: the products' own, read at each scrape (a product's in-process state). */
export function serveIngressMetrics(platform: Platform, outboxes: readonly Outbox[], gauges: readonly ((registry: Registry) => void)[] = []): Promise<MetricsServer | undefined> {
  return serve(platform, portOf(platform, INGRESS_METRICS_PORT), {
    scrapeGauges: (registry) => {
      outboxBacklogGauge(outboxes, platform.log)(registry);
      for (const gauge of gauges) gauge(registry);
    },
  });
}

export function serveWorkerMetrics(platform: Platform, runtimes: readonly WorkerRuntime<unknown, unknown>[], kinds: readonly WorkerKind[]): Promise<MetricsServer | undefined> {
  const groups = () => runtimes.map((r) => ({ group: r.group, topics: r.topicNames }));
  return serve(platform, portOf(platform, WORKER_METRICS_PORT), {
    scrapeGauges: (registry) => {
      consumerLagGauge(platform.kafkaAdmin, groups, platform.log)(registry);
      for (const kind of kinds) kind.scrapeGauges?.(registry);
    },
    readiness: async () => {
      const consumers = await Promise.all(runtimes.map(async (r) => {
        const lag = await consumerLag(platform.kafkaAdmin, r.group, r.topicNames).then(
          (partitions) => ({ lag: partitions.reduce((sum, p) => sum + p.lag, 0) }),
          (err: Error) => ({ lag: null, error: err.message }),
        );
        // A consumer stopped for good is never reported joined, whatever it was last assigned.
        const failed = r.failed === null ? {} : { failed: r.failed };
        return { group: r.group, joined: r.failed === null && r.assignment !== null, partitions: r.assignment ?? {}, ...lag, ...failed };
      }));
      const failure = platform.shutdown.failure;
      return { ready: !failure && consumers.every((c) => c.joined && c.lag !== null), consumers, ...(failure ? { failed: failure } : {}) };
    },
  });
}
