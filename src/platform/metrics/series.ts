// The platform's Prometheus series, one set per process (prom-client's default
// registry), so any code of the process counts into them without being handed a
// registry. Products add their own series next to their code. Series whose value
// is read at scrape time (lag, backlogs, queues) are gauges registered by the
// process that can read them (scrape-gauges.ts).
import { collectDefaultMetrics, Counter, Histogram, register } from 'prom-client';

/** The registry a process's /metrics serves. */
export const processRegistry = register;

/**
 * The series of this name in the process's registry, made by `make` the first time. A module may be
 * evaluated more than once in one process (test runners give each file fresh modules, while
 * prom-client's registry lives on), and a name can be registered only once.
 */
export function series<M>(name: string, make: () => M): M {
  return (processRegistry.getSingleMetric(name) as M | undefined) ?? make();
}

// Node's own: CPU, memory, event-loop lag, GC, handles (process_*, nodejs_*). Three of prom-client's
// gauges end in _total, which Prometheus keeps for counters (promtool refuses them); their per-type
// versions (nodejs_active_handles, …) say the same and stay.
if (!processRegistry.getSingleMetric('process_cpu_seconds_total')) {
  collectDefaultMetrics({ register: processRegistry });
  for (const misnamed of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) processRegistry.removeSingleMetric(misnamed);
}

/**
 * Runs before the HTTP series are read: the answers counted apart (answer-tally.ts) join them. Kept
 * on globalThis, as the series are kept in prom-client's registry, so that a module evaluated again
 * (test runners) adds its tallies to the same series.
 */
export const beforeHttpSeriesRead: Set<() => void> = ((globalThis as Record<symbol, unknown>)[Symbol.for('linkmail.beforeHttpSeriesRead')] ??= new Set()) as Set<() => void>;
const flushTallies = () => {
  for (const flush of beforeHttpSeriesRead) flush();
};

export const httpRequests = series('linkmail_http_requests_total', () => new Counter({
  name: 'linkmail_http_requests_total',
  help: 'HTTP requests answered, by method, route (the route pattern; "unmatched" for none) and status.',
  labelNames: ['method', 'route', 'status'] as const,
  collect: flushTallies,
}));

export const httpRequestDuration = series('linkmail_http_request_duration_seconds', () => new Histogram({
  name: 'linkmail_http_request_duration_seconds',
  help: 'Time from a request\'s arrival to its response, by method, route and status class.',
  labelNames: ['method', 'route', 'status_class'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  collect: flushTallies,
}));

export const httpRefusals = series('linkmail_http_refusals_total', () => new Counter({
  name: 'linkmail_http_refusals_total',
  help: 'Requests answered with an error, by status and stable error code (rate_limited, validation_failed, internal_error…).',
  labelNames: ['status', 'code'] as const,
}));

export const handlerDuration = series('linkmail_worker_handler_duration_seconds', () => new Histogram({
  name: 'linkmail_worker_handler_duration_seconds',
  help: 'Time a worker kind\'s handler took for one message or batch, successful or not.',
  labelNames: ['kind'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
}));

export const handlerRetries = series('linkmail_worker_retries_total', () => new Counter({
  name: 'linkmail_worker_retries_total',
  help: 'Handler failures that were retried, by worker kind and whether the failure was an outage (transient).',
  labelNames: ['kind', 'transient'] as const,
}));

export const deadLetters = series('linkmail_worker_dead_letters_total', () => new Counter({
  name: 'linkmail_worker_dead_letters_total',
  help: 'Messages a worker kind gave up on and wrote to the dead-letter topic.',
  labelNames: ['kind'] as const,
}));

export const clickhouseInsertRows = series('linkmail_clickhouse_insert_rows', () => new Histogram({
  name: 'linkmail_clickhouse_insert_rows',
  help: 'Rows per ClickHouse insert, by table.',
  labelNames: ['table'] as const,
  buckets: [1, 10, 100, 500, 1000, 5000, 10000, 50000],
}));

export const clickhouseInsertDuration = series('linkmail_clickhouse_insert_duration_seconds', () => new Histogram({
  name: 'linkmail_clickhouse_insert_duration_seconds',
  help: 'Time of a ClickHouse insert, by table and outcome.',
  labelNames: ['table', 'outcome'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
}));
