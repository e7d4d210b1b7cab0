// The scan shipper thread: reads the journal segments the ingress seals, adds
// location and device data, encodes them in Avro and produces them to the
// `scans` topic. It runs beside the ingress's event loop, so enrichment and
// Kafka never hold up a redirect. Messages from the ingress: `sealed` (ship
// now) and `stop` (ship what you can, then say `stopped`).
import '../../platform/next-tick-shape.ts'; // this thread's own nextTick: see there
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { scansTopic } from '../../../topics/scans.ts';
import { orphanVisitsTopic } from '../../../topics/orphan-visits.ts';
import { loadConfig } from '../../platform/config.ts';
import { linksSettings } from '../config.ts';
import { createKafka } from '../../platform/kafka/client.ts';
import { Publisher } from '../../platform/kafka/publisher.ts';
import { createProducer } from '../../platform/kafka/producer.ts';
import { createLogger } from '../../platform/logger.ts';
import { createSchemaRegistry } from '../../platform/registry/schema-registry.ts';
import { Geo } from './geo.ts';
import { JournalShipper } from './journal-shipper.ts';
import { decodeJournalLine } from './journal-line.ts';
import type { RawScan } from './raw-scan.ts';
import type { ScanEvent } from './scan-event.ts';
import { scanEnricher } from './scan-enrichment.ts';
import { isOrphanVisit, type OrphanVisitEvent, type RawOrphanVisit } from '../orphans/orphan-visit.ts';
import { orphanVisitEnricher } from '../orphans/orphan-enrichment.ts';
import { collectStartUpGarbage } from '../../platform/start-up-garbage.ts';

const { dir, env } = workerData as { dir: string; env: Record<string, string> };
const config = loadConfig(env, [linksSettings]);
// Optionally, answering redirects comes first: this thread then takes the CPU they leave and the
// scans wait in the journal meanwhile (they are already on disk). Linux sets a thread's own
// priority this way; elsewhere it would lower the whole process, event loop included.
if (config.SCAN_SHIPPER_NICE > 0 && process.platform === 'linux') {
  try {
    setPriority(config.SCAN_SHIPPER_NICE);
  } catch {
    // not permitted here: ship at normal priority
  }
}
const log = createLogger(config, 'scan-shipper');
const kafka = createKafka(config, log);
const producer = createProducer(kafka);
const publisher = new Publisher(producer, createSchemaRegistry(config), config.TOPIC_PREFIX);
// One reader of the IP files for both: scans and orphan visits.
const geo = Geo.open();
const enrich = scanEnricher(geo, config.CLICK_ID_SECRET);
const enrichOrphan = orphanVisitEnricher(geo);

// Kafka and the registry are reached when there is something to ship, and again after a failure,
// so the thread starts (and the ingress serves) while they are away.
let connected: Promise<void> | undefined;
const ensureConnected = () =>
  (connected ??= (async () => {
    await producer.connect();
    await publisher.register([scansTopic, orphanVisitsTopic]);
  })().catch((err) => {
    connected = undefined;
    throw err;
  }));

const shipper = new JournalShipper<RawScan | RawOrphanVisit>(
  dir,
  async (entries) => {
    await ensureConnected();
    // The journal holds scans and, from branded domains' fallbacks, orphan visits: each to its topic.
    const scans: RawScan[] = [];
    const orphans: RawOrphanVisit[] = [];
    for (const entry of entries) {
      if (isOrphanVisit(entry)) orphans.push(entry);
      else scans.push(entry);
    }
    if (scans.length > 0) await publisher.publish<ScanEvent>(scansTopic, scans.map((raw) => ({ key: raw.workspaceId, value: enrich(raw) })));
    if (orphans.length > 0) await publisher.publish<OrphanVisitEvent>(orphanVisitsTopic, orphans.map((raw) => ({ key: raw.workspaceId, value: enrichOrphan(raw) })));
  },
  log,
  decodeJournalLine,
);
// Also on a timer: segments adopted from a stopped process, and retries after a failure.
const timer = setInterval(() => shipper.shipSoon(), 250);

parentPort!.on('message', async (message: { type: 'sealed' } | { type: 'stop'; timeoutMs: number }) => {
  if (message.type === 'sealed') shipper.shipSoon();
  if (message.type === 'stop') {
    clearInterval(timer);
    await shipper.drain(message.timeoutMs);
    await producer.disconnect().catch(() => {});
    parentPort!.postMessage({ type: 'stopped', stats: shipper.stats });
  }
});
// This thread's heap has its own start-up garbage (its modules).
collectStartUpGarbage();
parentPort!.postMessage({ type: 'ready' });
shipper.shipSoon();
