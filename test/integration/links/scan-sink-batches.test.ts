// The scan sink under a backlog: a fetch of a partition brings up to 8 MiB (about 20,000 scans),
// stored in one insert. Such a batch's duplicate check is longer than ClickHouse's default
// max_query_size (256 KiB); it must still be stored once, and a replay of it add nothing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostWorkers } from '../../../src/platform/actors/host.ts';
import type { ActorMessage } from '../../../src/platform/actors/worker-kind.ts';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { scansTopic } from '../../../topics/scans.ts';
import { eventually } from '../../support/env.ts';
import { startIngress, type TestIngress } from '../../support/ingress.ts';
import { scanSink, scansStored } from '../../support/links/scans.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

const SCANS = 20_000;
let ingress: TestIngress;
let workspaceId: string;
let events: ScanEvent[];

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  ({ workspaceId } = await workspaceWithKey(ingress.url));
  const linkId = randomUUID();
  const start = Date.now() - 3600_000;
  events = Array.from({ length: SCANS }, (_, i) => ({
    scanId: randomUUID(), clickId: 'c', workspaceId, linkId, shortId: 'batch', campaignId: null,
    timestamp: start + i * 50, destination: 'https://example.com/batch',
    country: i % 2 ? 'US' : 'DE', region: null, city: null, device: 'mobile', os: 'iOS', browser: 'Safari', isBot: false,
    referrer: null, referrerHost: null, utmSource: null, utmMedium: null, utmCampaign: null, utmTerm: null, utmContent: null,
    userAgent: null, visitorId: `v${i % 700}`,
  }));
}, 60_000);

afterAll(async () => {
  await ingress?.close();
});

describe('scan sink batches', () => {
  it('stores a backlog of 20,000 scans of one workspace once, in batches of thousands', async () => {
    // All keyed by one workspace: one partition, a backlog fetched in batches of up to 8 MiB.
    const messages = events.map((e) => ({ key: workspaceId, value: e }));
    for (let i = 0; i < messages.length; i += 1000) await ingress.platform.publisher.publish(scansTopic, messages.slice(i, i + 1000));
    const kind = scanSink(ingress.platform);
    const sizes: number[] = [];
    const [runtime] = await hostWorkers(ingress.platform, [{
      ...kind,
      handleBatch: async (batch: ActorMessage<ScanEvent>[]) => {
        await kind.handleBatch(batch);
        if (batch[0]?.value.workspaceId === workspaceId) sizes.push(batch.length);
      },
    }]);
    try {
      await eventually(() => scansStored(ingress.platform.clickhouse, workspaceId, SCANS), 60_000, 250);
    } finally {
      await runtime!.stop();
    }
    // Fetches of up to 8 MiB a partition (the 20,000 scans are about 7 MB): not kafkajs's 1 MiB, nor 4.
    console.log(`scan sink batches: ${sizes.join(', ')}`);
    expect(Math.max(...sizes)).toBeGreaterThan(12_000);
  }, 90_000);

  it('adds nothing when the whole 20,000-scan batch is handled again, as after a crash before its commit', async () => {
    const replay: ActorMessage<ScanEvent>[] = events.map((value, i) => ({
      topic: scansTopic.name, partition: 0, offset: String(i), key: workspaceId, value, timestamp: value.timestamp, headers: {},
    }));
    await scanSink(ingress.platform).handleBatch(replay);
    expect(await scansStored(ingress.platform.clickhouse, workspaceId, SCANS)).toBe(true);
  }, 60_000);
});
