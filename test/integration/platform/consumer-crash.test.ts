// A consumer that cannot go on stops its process (issue 41): when kafkajs reports a crash it
// will not restart from (CRASH with restart false), the worker's /readyz answers 503 naming the
// group (never joined), and the process shuts down and exits 1 for its supervisor to restart it.
// A retriable crash is retried by kafkajs and leaves the process running and ready.
// The crash is provoked in test/fixtures/crash-consumer-worker.ts: a dead-letter write that fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../../../src/platform/platform.ts';
import { deadLettersTopic } from '../../../src/platform/actors/dead-letters-topic.ts';
import { probeTopic, type Probe } from '../../fixtures/probe-topics.ts';
import { eventually, testConfig } from '../../support/env.ts';
import { startTs, stopChild, waitForOutput, type Child } from '../../support/processes.ts';

const topics = ['probe.crash-stay', 'probe.crash-exit', 'probe.crash-retriable'].map((name) => probeTopic(name, 1));
let platform: Platform;
const started: Child[] = [];

beforeAll(async () => {
  platform = await startPlatform(testConfig(), { name: 'test', topics: [...topics, deadLettersTopic], migrate: false });
});
afterAll(async () => {
  await Promise.all(started.map((c) => stopChild(c)));
  await platform?.shutdown.run('test done');
}, 60_000);

async function startWorker(topic: string, mode: string, ...rest: string[]): Promise<{ child: Child; readyz: string }> {
  const child = startTs('test/fixtures/crash-consumer-worker.ts', [topic, mode, ...rest], { LOG_LEVEL: 'info', METRICS_PORT: '0', SHUTDOWN_TIMEOUT_MS: '10000' });
  started.push(child);
  await waitForOutput(child, 'metrics listening', 90_000);
  const line = child.output().split('\n').find((l) => l.includes('metrics listening'))!;
  const readyz = `${JSON.parse(line).url}/readyz`;
  await waitForOutput(child, 'crash-consumer-worker ready', 90_000);
  return { child, readyz };
}

const publishOne = (topicIndex: number) =>
  platform.publisher.publish(topics[topicIndex]!, [{ key: 'a', value: { id: 'poison', seq: 1, text: 'x', amount: null, at: Date.now() } satisfies Probe }]);

type Readyz = { status: string; consumers: { group: string; joined: boolean; failed?: string }[]; failed?: { component: string } };
const readyzOf = async (url: string): Promise<{ status: number; body: Readyz } | undefined> => {
  const res = await fetch(url).catch(() => undefined);
  return res && { status: res.status, body: (await res.json()) as Readyz };
};

describe('a consumer crash kafkajs will not restart from', () => {
  it('makes /readyz answer 503 naming the group, never joined', async () => {
    const { child, readyz } = await startWorker('probe.crash-stay', 'non-retriable', 'stay');
    await eventually(async () => (await readyzOf(readyz))?.status === 200, 60_000, 250);
    await publishOne(0);
    const answer = (await eventually(async () => {
      const r = await readyzOf(readyz);
      return r?.status === 503 ? r : undefined;
    }, 60_000, 250))!;
    const [consumer] = answer.body.consumers;
    expect(consumer!.group).toMatch(/probe\.crash-stay\.worker$/);
    expect(consumer!.joined).toBe(false);
    expect(consumer!.failed).toMatch(/KafkaJSNonRetriableError: injected/);
    expect(answer.body.failed?.component).toBe(`consumer ${consumer!.group}`);
    // It stays failed: kafkajs does not restart the consumer.
    await new Promise((r) => setTimeout(r, 2000));
    expect((await readyzOf(readyz))?.status).toBe(503);
    expect(child.process.exitCode).toBeNull();
  }, 150_000);

  it('shuts the process down gracefully and exits 1', async () => {
    const { child, readyz } = await startWorker('probe.crash-exit', 'non-retriable');
    await eventually(async () => (await readyzOf(readyz))?.status === 200, 60_000, 250);
    const crashedAt = Date.now();
    await publishOne(1);
    const exit = await Promise.race([child.exited, new Promise<'late'>((r) => setTimeout(() => r('late'), 40_000))]);
    expect(exit, child.output()).toEqual({ code: 1, signal: null });
    expect(Date.now() - crashedAt).toBeLessThan(40_000);
    expect(child.output()).toContain('cannot go on; the process is failed');
    expect(child.output()).toContain('shutdown complete');
    expect(child.output()).toContain('"restart":false');
  }, 150_000);
});

describe('a retriable consumer error', () => {
  it('is retried by kafkajs and leaves the process running and ready', async () => {
    const { child, readyz } = await startWorker('probe.crash-retriable', 'retriable');
    await eventually(async () => (await readyzOf(readyz))?.status === 200, 60_000, 250);
    await publishOne(2);
    await waitForOutput(child, 'message dead-lettered', 60_000);
    await eventually(async () => (await readyzOf(readyz))?.status === 200, 30_000, 250);
    // Refused twice (kafkajs retried the batch each time), then written.
    expect(child.output().split('injected fault: retriable').length - 1).toBe(2);
    expect(child.output()).not.toContain('cannot go on');
    expect(child.process.exitCode).toBeNull();
  }, 150_000);
});
