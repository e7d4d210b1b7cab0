// The actor runtime against real Kafka: retries with backoff, dead letters,
// per-key order, state loading, poison messages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostWorkers } from '../../../src/platform/actors/host.ts';
import type { WorkerKind } from '../../../src/platform/actors/worker-kind.ts';
import { startPlatform, type Platform } from '../../../src/platform/platform.ts';
import { deadLettersTopic } from '../../../src/platform/actors/dead-letters-topic.ts';
import { prefixed } from '../../../src/platform/kafka/topic-definition.ts';
import { probeTopic, type Probe } from '../../fixtures/probe-topics.ts';
import { readDeadLetters } from '../../support/dead-letters.ts';
import { eventually, testConfig } from '../../support/env.ts';

const topic = probeTopic('probe.actors', 3);
let platform: Platform;

beforeAll(async () => {
  platform = await startPlatform(testConfig({ ACTOR_MAX_ATTEMPTS: '3', ACTOR_RETRY_BASE_MS: '50' }), {
    name: 'test',
    topics: [topic, deadLettersTopic],
    migrate: false,
  });
});
afterAll(async () => {
  await platform?.shutdown.run('test done');
});

const probe = (id: string, seq: number, text = ''): Probe => ({ id, seq, text, amount: null, at: Date.now() });

describe('actor runtime', () => {
  it('handles each key in order, one message at a time, loading state once per key', async () => {
    const seen = new Map<string, number[]>();
    const active = new Set<string>();
    let overlaps = 0;
    const loads: string[] = [];
    const kind: WorkerKind<Probe, { count: number }> = {
      kind: 'ordering',
      topics: [topic],
      concurrency: 3,
      loadState: async (key) => {
        loads.push(key);
        return { count: 0 };
      },
      handle: async (message, actor) => {
        if (active.has(actor.key)) overlaps++;
        active.add(actor.key);
        await new Promise((r) => setTimeout(r, Math.random() * 3));
        actor.state.count++;
        seen.set(actor.key, [...(seen.get(actor.key) ?? []), message.value.seq]);
        active.delete(actor.key);
      },
    };
    const keys = ['a', 'b', 'c', 'd', 'e'];
    const messages = Array.from({ length: 100 }, (_, i) => ({ key: `order-${keys[i % 5]}`, value: probe(`o${i}`, i) }));
    await platform.publisher.publish(topic, messages);
    const [runtime] = await hostWorkers(platform, [kind]);
    try {
      await eventually(async () => [...seen.values()].reduce((n, s) => n + s.length, 0) >= 100);
      expect(overlaps).toBe(0);
      for (const k of keys) {
        const seqs = seen.get(`order-${k}`)!;
        expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
        expect(seqs).toHaveLength(20);
      }
      expect(loads.sort()).toEqual(keys.map((k) => `order-${k}`));
    } finally {
      await runtime!.stop();
    }
  });

  it('retries a failing handler with backoff and then handles the message once', async () => {
    const attempts: number[] = [];
    const done: string[] = [];
    const kind: WorkerKind<Probe> = {
      kind: 'flaky',
      topics: [topic],
      handle: async (message) => {
        if (message.value.text !== 'flaky') return;
        attempts.push(Date.now());
        if (attempts.length < 3) throw new Error('transient');
        done.push(message.value.id);
      },
    };
    await platform.publisher.publish(topic, [{ key: 'flaky', value: probe('f1', 1, 'flaky') }]);
    const [runtime] = await hostWorkers(platform, [kind]);
    try {
      await eventually(async () => done.length === 1);
      expect(attempts).toHaveLength(3);
      // Backoff grows: the second gap is longer than the first (50 ms then 100 ms, ±20%).
      const gap1 = attempts[1]! - attempts[0]!;
      const gap2 = attempts[2]! - attempts[1]!;
      expect(gap1).toBeGreaterThanOrEqual(35);
      expect(gap2).toBeGreaterThan(gap1 * 1.2);
    } finally {
      await runtime!.stop();
    }
  });

  it('sends a message that keeps failing to the dead-letter topic with the error, and goes on', async () => {
    let attempts = 0;
    const after: string[] = [];
    const kind: WorkerKind<Probe> = {
      kind: 'doomed',
      topics: [topic],
      handle: async (message) => {
        if (message.value.text === 'doomed') {
          attempts++;
          throw new Error('cannot handle doomed probe');
        }
        if (message.value.text === 'after-doomed') after.push(message.value.id);
      },
    };
    await platform.publisher.publish(topic, [
      { key: 'doom', value: probe('d1', 1, 'doomed') },
      { key: 'doom', value: probe('d2', 2, 'after-doomed') },
    ]);
    const [runtime] = await hostWorkers(platform, [kind]);
    try {
      // The next message of the same actor is handled after the doomed one was dead-lettered.
      await eventually(async () => after.includes('d2'));
      expect(attempts).toBe(3);
      const letters = await readDeadLetters(platform.config, (l) => l.some((x) => x.workerKind === 'doomed'));
      const letter = letters.find((x) => x.workerKind === 'doomed')!;
      expect(letter.error).toBe('cannot handle doomed probe');
      expect(letter.attempts).toBe(3);
      expect(letter.key).toBe('doom');
      expect(letter.topic).toBe(prefixed(platform.config.TOPIC_PREFIX, topic.name));
      // The original bytes are kept, decodable through the registry.
      const original = (await platform.registry.decode(Buffer.from(letter.value!))) as Probe;
      expect(original.id).toBe('d1');
    } finally {
      await runtime!.stop();
    }
  });

  it('dead-letters a poison message that is not Avro instead of blocking the partition', async () => {
    const handled: string[] = [];
    const kind: WorkerKind<Probe> = {
      kind: 'poison',
      topics: [topic],
      maxAttempts: 2,
      handle: async (message) => {
        if (message.value.text === 'after-poison') handled.push(message.value.id);
      },
    };
    await platform.producer.send({
      topic: prefixed(platform.config.TOPIC_PREFIX, topic.name),
      messages: [{ key: 'poison', value: Buffer.from('not avro at all') }],
    });
    await platform.publisher.publish(topic, [{ key: 'poison', value: probe('p2', 2, 'after-poison') }]);
    const [runtime] = await hostWorkers(platform, [kind]);
    try {
      await eventually(async () => handled.includes('p2'));
      const letters = await readDeadLetters(platform.config, (l) => l.some((x) => x.workerKind === 'poison'));
      const letter = letters.find((x) => x.workerKind === 'poison')!;
      expect(Buffer.from(letter.value!).toString()).toBe('not avro at all');
      expect(letter.attempts).toBe(2);
    } finally {
      await runtime!.stop();
    }
  });

  it('decodes and hands a batch kind only the messages its select picks from keys and headers, and commits past the rest', async () => {
    const handled: string[] = [];
    const offered: string[] = [];
    const kind: WorkerKind<Probe> = {
      kind: 'selecting',
      topics: [topic],
      maxAttempts: 2,
      fetch: { minBytes: 64 * 1024, maxWaitTimeInMs: 200 },
      select: async (messages) => {
        offered.push(...messages.map((m) => m.key));
        return messages.map((m) => m.key.startsWith('pick-') || m.headers.pick?.toString() === 'yes');
      },
      handleBatch: async (messages) => {
        handled.push(...messages.filter((m) => m.value.text === 'select').map((m) => m.value.id));
      },
    };
    // A message that is not Avro under a key the kind skips: never decoded, so never dead-lettered.
    await platform.producer.send({
      topic: prefixed(platform.config.TOPIC_PREFIX, topic.name),
      messages: [{ key: 'skip-poison', value: Buffer.from('not avro either') }],
    });
    await platform.publisher.publish(topic, [
      { key: 'pick-1', value: probe('s1', 1, 'select') },
      { key: 'skip-2', value: probe('s2', 2, 'select') },
      { key: 'skip-3', value: probe('s3', 3, 'select'), headers: { pick: 'yes' } },
      { key: 'pick-4', value: probe('s4', 4, 'select') },
    ]);
    const [runtime] = await hostWorkers(platform, [kind]);
    try {
      await eventually(async () => handled.length >= 3);
      await new Promise((r) => setTimeout(r, 500));
      expect(handled.sort()).toEqual(['s1', 's3', 's4']);
      expect(offered).toEqual(expect.arrayContaining(['skip-poison', 'skip-2']));
      // Read the whole dead-letter topic (for 8 s, unless a letter of this kind turns up first).
      const letters = await readDeadLetters(platform.config, (l) => l.some((x) => x.workerKind === 'selecting'), 8000);
      expect(letters.filter((l) => l.workerKind === 'selecting')).toEqual([]);
    } finally {
      await runtime!.stop();
    }
    // Committed past the skipped ones: a new member of the group is offered nothing again.
    offered.length = 0;
    const [again] = await hostWorkers(platform, [kind]);
    try {
      await new Promise((r) => setTimeout(r, 3000));
      expect(offered).not.toContain('skip-2');
    } finally {
      await again!.stop();
    }
  });

  it.each([
    ['throws', 'failing-select', async (): Promise<boolean[]> => {
      throw new Error('select broke');
    }],
    ['answers for fewer messages than it was given', 'short-select', async (): Promise<boolean[]> => []],
  ])('hands a batch kind all of a batch when its select keeps failing (it %s)', async (_how, name, select) => {
    const handled: string[] = [];
    const kind: WorkerKind<Probe> = {
      kind: name,
      topics: [topic],
      maxAttempts: 2,
      select,
      handleBatch: async (messages) => {
        handled.push(...messages.filter((m) => m.value.text === 'fallback' && m.value.id.startsWith(name)).map((m) => m.value.id));
      },
    };
    await platform.publisher.publish(topic, [{ key: `${name}-1`, value: probe(`${name}1`, 1, 'fallback') }, { key: `${name}-2`, value: probe(`${name}2`, 2, 'fallback') }]);
    const [runtime] = await hostWorkers(platform, [kind]);
    try {
      await eventually(async () => handled.length >= 2);
      expect(handled.sort()).toEqual([`${name}1`, `${name}2`]);
    } finally {
      await runtime!.stop();
    }
  });
});
