// Running it as an operator would: processes started at the same moment on empty
// databases all come up (migrations run once, under one lock), and every process
// serves Prometheus metrics on its operations port that Prometheus's own checker
// (promtool, from Debian's prometheus package) accepts, with the series docs/operations.md
// lists; a worker process's /readyz tells whether its consumers are in their
// groups and how far behind they are.
import { execFile } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabases } from '../../support/fresh-databases.ts';
import { childPort, startTs, stopChild, waitForOutput, type Child } from '../../support/processes.ts';

const started: Child[] = [];
// Fresh databases and topics of this file's own: its worker processes (a mail sender, a webhook
// dispatcher) would otherwise take the queued work of other files sharing the run's database.
const fresh = freshDatabases('fresh');
const freshEnv = () => ({ ...fresh.env(), METRICS_PORT: '0' });

afterAll(async () => {
  await Promise.all(started.map((c) => stopChild(c)));
  await fresh.drop();
}, 60_000);

const start = (entry: string, args: string[], env: Record<string, string>) => {
  const child = startTs(entry, args, { LOG_LEVEL: 'info', ...env });
  started.push(child);
  return child;
};

/** The operations port's URL a process logged ("metrics listening"). */
async function metricsUrl(child: Child): Promise<string> {
  await waitForOutput(child, 'metrics listening', 120_000);
  const line = child.output().split('\n').find((l) => l.includes('metrics listening'))!;
  return JSON.parse(line).url;
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

/** promtool check metrics on this exposition: its exit code and what it said. */
function promtool(exposition: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = execFile('promtool', ['check', 'metrics'], (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, output: stdout + stderr }));
    child.stdin!.end(exposition);
  });
}

describe('processes started at once on empty databases', () => {
  it('two ingresses and two worker processes on fresh databases and a fresh topic prefix all come up and serve', async () => {
    const env = freshEnv();
    const ports = [childPort(), childPort()];
    const processes = [
      start('src/main.ts', [], { ...env, HTTP_PORT: ports[0]! }),
      start('src/main.ts', [], { ...env, HTTP_PORT: ports[1]! }),
      start('workers/all.ts', [], env),
      start('workers/all.ts', [], env),
    ];
    const [ingressA, ingressB, workersA, workersB] = processes;
    await Promise.all([waitForOutput(ingressA!, 'ingress listening', 180_000), waitForOutput(ingressB!, 'ingress listening', 180_000)]);
    await Promise.all([waitForOutput(workersA!, 'worker process ready', 180_000), waitForOutput(workersB!, 'worker process ready', 180_000)]);
    for (const port of ports) expect((await get(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    for (const worker of [workersA!, workersB!]) {
      const ops = await metricsUrl(worker);
      // Both processes' consumers are in their groups (the two share each group's partitions).
      let ready = await get(`${ops}/readyz`);
      for (const end = Date.now() + 60_000; ready.status !== 200 && Date.now() < end; ) {
        await new Promise((r) => setTimeout(r, 500));
        ready = await get(`${ops}/readyz`);
      }
      expect(ready.status, ready.text).toBe(200);
      const body = JSON.parse(ready.text);
      expect(body.status).toBe('ready');
      expect(body.consumers.length).toBeGreaterThan(3);
      for (const c of body.consumers) expect(typeof c.lag).toBe('number');
    }
    // None of the four died or logged a failed migration.
    for (const p of processes) {
      expect(p.process.exitCode).toBeNull();
      // (kafkajs logs the two members' rebalances as errors: not a failure.)
      expect(p.output()).not.toMatch(/doesn't exist|DB::Exception|Not run migration|already exists/);
    }
    await Promise.all(processes.map((p) => stopChild(p)));
  }, 300_000);
});

describe('/metrics of every process', () => {
  it('the ingress and a worker process serve metrics promtool accepts, with the series operators alert on', async () => {
    const port = childPort();
    const ingress = start('src/main.ts', [], { ...freshEnv(), HTTP_PORT: port });
    const workers = start('workers/run.ts', ['links-scan-sink', 'mail-sender', 'links-webhooks'], freshEnv());
    const [ingressOps, workerOps] = await Promise.all([metricsUrl(ingress), metricsUrl(workers)]);
    await waitForOutput(workers, 'worker process ready', 120_000);
    // Traffic for the HTTP series: a route, a refusal, an unknown path.
    await get(`http://127.0.0.1:${port}/healthz`);
    await get(`http://127.0.0.1:${port}/api/v1/links`);
    await get(`http://127.0.0.1:${port}/no/such/route`);

    const ingressMetrics = await get(`${ingressOps}/metrics`);
    expect(ingressMetrics.status).toBe(200);
    const checkedIngress = await promtool(ingressMetrics.text);
    expect(checkedIngress.code, checkedIngress.output).toBe(0);
    expect(ingressMetrics.text).toMatch(/^linkmail_http_requests_total\{method="GET",route="\/healthz",status="200"\} 1$/m);
    expect(ingressMetrics.text).toMatch(/^linkmail_http_refusals_total\{status="401",code="missing_api_key"\} 1$/m);
    expect(ingressMetrics.text).toMatch(/^linkmail_http_request_duration_seconds_bucket\{le="0.5",method="GET",route="\/healthz",status_class="2xx"\} 1$/m);
    expect(ingressMetrics.text).toMatch(/^linkmail_outbox_backlog\{outbox="mail\.messages"\} \d+$/m);
    expect(ingressMetrics.text).toMatch(/^linkmail_live_streams 0$/m);
    // No stream open: the live scans hub has not started and keeps nothing.
    expect(ingressMetrics.text).toMatch(/^linkmail_live_scans_held 0$/m);
    expect(ingressMetrics.text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(ingressMetrics.text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
    // The heap of the ingress's other thread, which prom-client's nodejs_heap_* do not see (once
    // that thread runs: it may still be loading its code when the ingress answers).
    const shipperHeap = /^linkmail_thread_heap_size_bytes\{thread="scan-shipper-0"\} \d/m;
    let threadMetrics = ingressMetrics;
    for (const end = Date.now() + 60_000; !shipperHeap.test(threadMetrics.text) && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 500));
      threadMetrics = await get(`${ingressOps}/metrics`);
    }
    expect(threadMetrics.text).toMatch(shipperHeap);

    let workerMetrics = await get(`${workerOps}/metrics`);
    for (const end = Date.now() + 60_000; !/^linkmail_kafka_consumer_lag\{/m.test(workerMetrics.text) && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 500));
      workerMetrics = await get(`${workerOps}/metrics`);
    }
    const checkedWorker = await promtool(workerMetrics.text);
    expect(checkedWorker.code, checkedWorker.output).toBe(0);
    expect(workerMetrics.text).toMatch(/^linkmail_kafka_consumer_lag\{group="[^"]+scan-sink",topic="[^"]+scans",partition="0"\} \d+$/m);
    expect(workerMetrics.text).toMatch(/^linkmail_mail_send_queue\{state="due"\} \d+$/m);
    expect(workerMetrics.text).toMatch(/^# TYPE linkmail_worker_handler_duration_seconds histogram$/m);
    expect(workerMetrics.text).toMatch(/^# TYPE linkmail_worker_dead_letters_total counter$/m);
    expect(workerMetrics.text).toMatch(/^# TYPE linkmail_mail_sends_total counter$/m);
    expect(workerMetrics.text).toMatch(/^# TYPE linkmail_clickhouse_insert_duration_seconds histogram$/m);
    const ready = await get(`${workerOps}/readyz`);
    expect([200, 503]).toContain(ready.status);
    expect(JSON.parse(ready.text).consumers.map((c: { group: string }) => c.group.split('.').pop())).toEqual(['scan-sink', 'mail-sender', 'webhooks']);
  }, 300_000);
});
