// Every worker kind of the product. `workers/all.ts` runs them all in one
// process; `workers/run.ts <kind>` runs one. Features add their kind here.
import type { WorkerKind } from '../src/platform/actors/worker-kind.ts';
import type { Platform } from '../src/platform/platform.ts';
import { scanSinkKind } from '../src/links/scans/scan-sink.ts';
import { scanLimitKind } from '../src/links/scans/scan-limit-actor.ts';
import { conversionSinkKind } from '../src/links/conversions/conversion-sink.ts';
import { webhookKind } from '../src/links/webhooks/webhook-worker.ts';
import { LinkChangelog } from '../src/links/changelog/link-changelog.ts';

export const workerKinds: Record<string, (platform: Platform) => WorkerKind> = {
  'scan-sink': (platform) => scanSinkKind(platform.clickhouse, platform.pg),
  'conversion-sink': (platform) => conversionSinkKind(platform.clickhouse, platform.pg),
  webhooks: (platform) => webhookKind(platform),
  'scan-limits': (platform) => scanLimitKind(platform.pg, new LinkChangelog(platform.pg, platform.publisher, platform.log)),
};
