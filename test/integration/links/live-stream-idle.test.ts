// The live scans hub costs nothing while no stream is open: an ingress reads the scans topic only
// from its first stream on, and stops (its consumer gone from Kafka, its rings dropped) a linger
// after its last; a stream opened after the stop still resumes from a Last-Event-ID taken before
// it. Concurrent first streams share one start; a start that fails (or is too slow) is refused, leaves
// nothing running, and the next subscribe tries again.
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { scansTopic } from '../../../topics/scans.ts';
import { ensureTopics } from '../../../src/platform/kafka/topics.ts';
import { prefixed } from '../../../src/platform/kafka/topic-definition.ts';
import { LiveScansUnavailable, ScanHub } from '../../../src/links/live/scan-hub.ts';
import type { TestIngress } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
import { createdLink, ingressWithWorkspace, type ApiClient } from '../../support/links/ingress-with-workspace.ts';
import { scan } from '../../support/links/scans.ts';
import { openStream, type SseStream } from '../../support/links/sse-client.ts';

const IDLE_STOP_MS = 1500;
let ingress: TestIngress;
let api: ApiClient;
let key: string;
let admin: Admin;
const streams: SseStream[] = [];

beforeAll(async () => {
  ({ ingress, api, key } = await ingressWithWorkspace({ LIVE_STREAM_IDLE_STOP_MS: String(IDLE_STOP_MS), LIVE_STREAM_HEARTBEAT_MS: '500' }));
  admin = ingress.platform.kafka.admin();
  await admin.connect();
});
afterAll(async () => {
  for (const s of streams) s.close();
  await admin?.disconnect();
  await ingress?.close();
});

const open = async (headers: Record<string, string> = {}) => {
  const s = await openStream(ingress.url, '/api/v1/analytics/stream', key, headers);
  streams.push(s);
  expect(s.status, JSON.stringify(s.body)).toBe(200);
  return s;
};

/** The live scans consumer groups of a prefix (this file's ingress's) that have members: running consumers. */
async function liveConsumers(topicPrefix = ingress.platform.config.TOPIC_PREFIX): Promise<string[]> {
  const prefix = prefixed(topicPrefix, 'ingress-live-scans-');
  const ids = (await admin.listGroups()).groups.map((g) => g.groupId).filter((id) => id.startsWith(prefix));
  if (ids.length === 0) return [];
  return (await admin.describeGroups(ids)).groups.filter((g) => g.members.length > 0).map((g) => g.groupId);
}

/** Creates a scans topic under `topicPrefix` and waits until its partitions' leaders answer (kafkajs's admin does not retry NOT_LEADER on offsets). */
async function scansTopicOf(topicPrefix: string): Promise<void> {
  await ensureTopics(admin, topicPrefix, [scansTopic], ingress.platform.log);
  await eventually(() => admin.fetchTopicOffsets(prefixed(topicPrefix, scansTopic.name)).then(() => true, () => false), 20_000);
}

const hub = () => ingress.app.liveScans;
const redirects = async (shortId: string, n: number) => {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await scan(ingress.url, shortId);
    expect(res.status).toBe(302);
    ids.push(res.clickId!);
  }
  return ids;
};

it('an ingress with no stream open runs no live consumer and holds no scans, even under redirects', async () => {
  const link = await createdLink(api, { destination: 'https://example.com/idle' });
  await redirects(link.shortId, 30);
  // Time for the journal to ship them to Kafka, where a running consumer would read them.
  await new Promise((r) => setTimeout(r, 1500));
  expect(hub().active).toBe(false);
  expect(hub().held).toBe(0);
  expect(hub().streams).toBe(0);
  expect(await liveConsumers()).toEqual([]);
});

it('concurrent first streams share one consumer; it stops a linger after the last closes, and a later stream resumes from before the stop', async () => {
  const link = await createdLink(api, { destination: 'https://example.com/linger' });
  const [a, b, c] = await Promise.all([open(), open(), open()]);
  expect(hub().active).toBe(true);
  expect(await liveConsumers()).toHaveLength(1);
  const before = await redirects(link.shortId, 5);
  await a.until((e) => e.filter((x) => x.event === 'scan').length >= 5, 10_000, 'the first 5 scans');
  expect(a.scans().map((s) => s.clickId)).toEqual(before);
  expect(hub().held).toBeGreaterThanOrEqual(5);
  const resumeFrom = a.lastEventId();
  for (const s of [a, b, c]) s.close();
  await eventually(async () => hub().streams === 0, 5000);

  // Within the linger the consumer still runs; past it, it is gone and the rings with it.
  expect(hub().active).toBe(true);
  const after = await redirects(link.shortId, 5);
  await eventually(async () => !hub().active && hub().held === 0, IDLE_STOP_MS + 10_000);
  expect(await eventually(async () => (await liveConsumers()).length === 0, 10_000)).toBe(true);
  const whileStopped = await redirects(link.shortId, 5);
  await new Promise((r) => setTimeout(r, 1000));
  expect(hub().held).toBe(0);

  // A stream resuming from before the stop: every scan after its cursor, once, read back from Kafka.
  const resumed = await open({ 'last-event-id': resumeFrom });
  expect(hub().active).toBe(true);
  const expected = [...after, ...whileStopped];
  await resumed.until((e) => e.filter((x) => x.event === 'scan').length >= expected.length, 10_000, `the ${expected.length} scans after the cursor`);
  // A live one opened now sees only what follows.
  const live = await open();
  const later = await redirects(link.shortId, 2);
  await resumed.until((e) => e.filter((x) => x.event === 'scan').length >= expected.length + 2, 10_000, 'the later scans');
  await live.until((e) => e.filter((x) => x.event === 'scan').length >= 2, 10_000, 'the later scans, live');
  await new Promise((r) => setTimeout(r, 500));
  expect(resumed.scans().map((s) => s.clickId)).toEqual([...expected, ...later]);
  expect(resumed.events.some((e) => e.event === 'resync')).toBe(false);
  expect(live.scans().map((s) => s.clickId)).toEqual(later);
  expect(await liveConsumers()).toHaveLength(1);
  resumed.close();
  live.close();
  await eventually(async () => !hub().active && hub().held === 0, IDLE_STOP_MS + 10_000);
}, 60_000);

it('a start that fails (no scans topic to read) refuses its subscribes, leaves nothing running, and the next subscribe starts', async () => {
  const { registry, log, config } = ingress.platform;
  const topicPrefix = `${config.TOPIC_PREFIX}.absent-${randomUUID().slice(0, 8)}`;
  // A client that gives up within seconds (the platform's retries for about a minute): the same failure, sooner.
  const kafka = new Kafka({ brokers: config.KAFKA_BROKERS.split(','), retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 6 }, logLevel: logLevel.NOTHING });
  const lonely = new ScanHub({ kafka, registry, topicPrefix, log, retentionMs: 60_000, maxPerPartition: 1000, idleStopMs: 500 });
  const subscriber = { onEvents: () => {} };
  try {
    const refused = await Promise.all([lonely.subscribe(randomUUID(), {}, subscriber), lonely.subscribe(randomUUID(), {}, subscriber)].map((p) => p.then(() => 'opened', (err: unknown) => err)));
    for (const err of refused) expect(err).toBeInstanceOf(LiveScansUnavailable);
    expect(lonely.active).toBe(false);
    expect(lonely.held).toBe(0);
    expect(lonely.streams).toBe(0);
    expect(await liveConsumers(topicPrefix)).toEqual([]);

    await scansTopicOf(topicPrefix);
    const sub = await lonely.subscribe(randomUUID(), {}, subscriber);
    expect(lonely.active).toBe(true);
    expect(lonely.streams).toBe(1);
    expect(await liveConsumers(topicPrefix)).toHaveLength(1);
    sub.close();
    await eventually(async () => !lonely.active && (await liveConsumers(topicPrefix)).length === 0, 10_000);
  } finally {
    await lonely.stop();
    await admin.deleteTopics({ topics: [prefixed(topicPrefix, scansTopic.name)] }).catch(() => {});
  }
}, 60_000);

it('a subscribe that stops waiting for a slow start is refused; the start goes on and, with no one to serve, stops after the linger', async () => {
  const { kafka, registry, log, config } = ingress.platform;
  const topicPrefix = `${config.TOPIC_PREFIX}.slow-${randomUUID().slice(0, 8)}`;
  await scansTopicOf(topicPrefix);
  // No start answers within 1 ms (it asks Kafka for offsets and joins a group).
  const impatient = new ScanHub({ kafka, registry, topicPrefix, log, retentionMs: 60_000, maxPerPartition: 1000, idleStopMs: 2000, startWaitMs: 1 });
  try {
    await expect(impatient.subscribe(randomUUID(), {}, { onEvents: () => {} })).rejects.toBeInstanceOf(LiveScansUnavailable);
    await eventually(async () => (await liveConsumers(topicPrefix)).length === 1, 20_000);
    await eventually(async () => !impatient.active && (await liveConsumers(topicPrefix)).length === 0, 20_000);
    expect(impatient.held).toBe(0);
  } finally {
    await impatient.stop();
    await admin.deleteTopics({ topics: [prefixed(topicPrefix, scansTopic.name)] }).catch(() => {});
  }
}, 60_000);
