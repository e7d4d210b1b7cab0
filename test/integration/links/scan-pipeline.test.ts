// N redirects make exactly N scans in analytics: with the sink worker killed
// (SIGKILL) mid-stream and restarted, with the topic replayed from the start
// and the same events published again, and with Kafka stopped during redirects.
// On a Kafka broker of the file's own (ownKafka), which it stops and starts.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.setConfig({ testTimeout: 300_000 });
import { Kafka, logLevel } from 'kafkajs';
import { prefixed } from '../../../src/platform/kafka/topic-definition.ts';
import { scansTopic } from '../../../topics/scans.ts';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import { client, freshIp, INGRESS_ENV, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';
import { childPort, startTs, waitForOutput, type Child } from '../../support/processes.ts';
import { readTopic } from '../../support/topic-reader.ts';
import { ownKafka, type OwnKafka } from '../../support/kafka-cluster.ts';
import { kafkaSecurity } from '../../../src/platform/kafka/security.ts';

let ingress: TestIngress;
let api: ReturnType<typeof client>;
let workspaceId: string;
let sink: Child | undefined;
let kafka: OwnKafka;

beforeAll(async () => {
  kafka = await ownKafka();
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', ...kafka.env });
  const ws = await workspaceWithKey(ingress.url);
  workspaceId = ws.workspaceId;
  api = client(ingress.url, ws.key);
});
afterAll(async () => {
  sink?.process.kill('SIGKILL');
  await ingress?.close();
  await kafka?.release();
});

/** Waits for `expected` stored scans; on failure, says how far it got and what the sink printed last. */
async function storedReaches(expected: number, timeoutMs: number, intervalMs: number): Promise<void> {
  try {
    await eventually(async () => (await stored()) === expected, timeoutMs, intervalMs);
  } catch (err) {
    throw new Error(`${(err as Error).message}: ${await stored()} of ${expected} scans stored; the sink's last output:\n${sink?.output().slice(-6000)}`);
  }
}

async function startSink(): Promise<Child> {
  const child = startTs('workers/links-scan-sink.ts', [], { LOG_LEVEL: 'info', ...kafka.env });
  await waitForOutput(child, 'worker process ready');
  return child;
}

/** Scans of this workspace stored in ClickHouse (raw rows, no FINAL, as analytics read them). */
const stored = async () =>
  Number((await ingress.platform.clickhouse.rows<{ n: string }>(sql`SELECT count() AS n FROM scans WHERE workspace_id = ${workspaceId}`))[0]!.n);

const totalFromApi = async () => {
  const res = await api.get(`/api/v1/analytics?from=${new Date(Date.now() - 86_400_000).toISOString()}`);
  expect(res.status).toBe(200);
  return res.body.totalScans as number;
};

async function redirects(shortId: string, count: number, concurrency = 10): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const res = await fetch(`${ingress.url}/${shortId}`, { redirect: 'manual', headers: { 'x-forwarded-for': freshIp(), 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' } });
      expect(res.status).toBe(302);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

describe('scan pipeline', () => {
  let expected = 0;
  let shortId: string;

  it('stores exactly N scans after the sink is killed with SIGKILL mid-stream and restarted', async () => {
    shortId = (await api.post('/api/v1/links', { destination: 'https://example.com/pipeline' })).body.shortId;
    await eventually(async () => ingress.app.redirects.cache.get(shortId) !== undefined, 5000, 20);
    sink = await startSink();
    // The sink is killed once it has stored some of the first 600, perhaps mid-batch; the
    // other 600 are sent after the kill, so some scans are surely left for the restarted sink (a fast
    // ingress could otherwise have every scan stored in one batch before the kill landed).
    const sending = redirects(shortId, 600);
    await eventually(async () => (await stored()) >= 100, 60_000, 50);
    sink.process.kill('SIGKILL');
    await sink.exited;
    await sending;
    await redirects(shortId, 600);
    expected = 1200;
    expect(await stored()).toBeLessThan(expected);
    sink = await startSink();
    await eventually(async () => (await stored()) === expected, 90_000, 250);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await stored()).toBe(expected);
    expect(await totalFromApi()).toBe(expected);
  });

  it('still counts N after the topic is replayed from the start and the same events are published again', async () => {
    sink!.process.kill('SIGTERM');
    expect((await sink!.exited).code).toBe(0);
    const config = ingress.platform.config;
    const admin = new Kafka({ brokers: config.KAFKA_BROKERS.split(','), ...kafkaSecurity(config), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.resetOffsets({ groupId: prefixed(config.TOPIC_PREFIX, 'scan-sink'), topic: prefixed(config.TOPIC_PREFIX, scansTopic.name), earliest: true });
    await admin.disconnect();
    // The same events again, at new offsets, as a re-shipped journal would produce.
    const mine = (await readTopic<ScanEvent>(config, 'scans', (m) => m.filter((x) => x.value.workspaceId === workspaceId).length >= expected)).filter((m) => m.value.workspaceId === workspaceId);
    expect(mine).toHaveLength(expected);
    await ingress.platform.publisher.publish(scansTopic, mine.slice(0, 500).map((m) => ({ key: m.key, value: m.value })));
    sink = await startSink();
    // Wait until the sink has read everything (the replay plus the duplicates), then count.
    const admin2 = new Kafka({ brokers: config.KAFKA_BROKERS.split(','), ...kafkaSecurity(config), logLevel: logLevel.NOTHING }).admin();
    await admin2.connect();
    await eventually(async () => {
      const ends = await admin2.fetchTopicOffsets(prefixed(config.TOPIC_PREFIX, scansTopic.name));
      const [group] = await admin2.fetchOffsets({ groupId: prefixed(config.TOPIC_PREFIX, 'scan-sink'), topics: [prefixed(config.TOPIC_PREFIX, scansTopic.name)] });
      const lagging = ends.filter((e) => Number(e.high) > 0 && group!.partitions.find((p) => p.partition === e.partition)?.offset !== e.high);
      return lagging.length === 0;
    }, 90_000, 250);
    await admin2.disconnect();
    expect(await stored()).toBe(expected);
    expect(await totalFromApi()).toBe(expected);
  });

  it('ships the journal of an ingress killed with SIGKILL from the next ingress', async () => {
    const journalDir = `${ingress.platform.config.SCAN_JOURNAL_DIR}-kill-test`;
    const port = childPort();
    const doomed = startTs('src/main.ts', [], { ...INGRESS_ENV, HTTP_PORT: port, LOG_LEVEL: 'info', SCAN_JOURNAL_DIR: journalDir, SCAN_JOURNAL_LEASE_MS: '2000', ...kafka.env });
    await waitForOutput(doomed, 'ingress listening');
    // With Kafka away, its scans can only be in its journal when it dies.
    await kafka.stop();
    try {
      for (let i = 0; i < 50; i++) {
        // A refused redirect (seen once: the ingress gone before its SIGKILL) fails with what the ingress printed.
        const res = await fetch(`http://127.0.0.1:${port}/${shortId}`, { redirect: 'manual', headers: { 'x-forwarded-for': freshIp(), 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' } })
          .catch((err: unknown) => {
            throw new Error(`redirect ${i + 1} of 50 to the ingress failed (exit code ${doomed.process.exitCode}): ${String(err)}; its output:\n${doomed.output().slice(-6000)}`);
          });
        expect(res.status).toBe(302);
      }
      await new Promise((r) => setTimeout(r, 300)); // past the 20 ms journal flush
      doomed.process.kill('SIGKILL');
      await doomed.exited;
    } finally {
      await kafka.start();
    }
    expect(await stored()).toBe(expected);
    expected += 50;
    // The next ingress on that journal directory adopts the orphaned segments once their lease expired.
    const heir = await startIngress({ SCAN_JOURNAL_DIR: journalDir, SCAN_JOURNAL_LEASE_MS: '2000', ...kafka.env });
    try {
      // Kafka was just restarted: the sink rejoins its group with kafkajs's growing backoff.
      await storedReaches(expected, 150_000, 250);
    } finally {
      await heir.close();
    }
  });

  it('keeps redirecting while Kafka is stopped, and every scan arrives once it is back', async () => {
    await kafka.stop();
    try {
      await redirects(shortId, 150);
      // Kafka is away: the scans wait in the journal on disk, none has reached ClickHouse.
      await new Promise((r) => setTimeout(r, 500));
      expect(ingress.app.redirects.journal.pendingSegments()).toBeGreaterThan(0);
      expect(await stored()).toBe(expected);
    } finally {
      await kafka.start();
    }
    expected += 150;
    await storedReaches(expected, 120_000, 500);
    // ClickHouse fills the rollups right after the table, within the same insert: a moment later.
    await eventually(async () => (await totalFromApi()) === expected, 5000, 100);
    expect(ingress.app.redirects.journal.pendingSegments()).toBe(0);
  });
});
