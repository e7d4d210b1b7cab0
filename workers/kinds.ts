// Every worker kind of the service. `workers/all.ts` runs them all in one
// process; `workers/run.ts <kind>` runs one. Products add their kinds here,
// named `<product>-<role>`; each is built from the product's services (its
// wiring), made once per process. A kind's name here is what operators type; its
// consumer group is the WorkerKind's own `kind` (scan-sink, webhooks, …), which
// stays as it was so that committed offsets and applied-offset rows carry over.
import type { WorkerKind } from '../src/platform/actors/worker-kind.ts';
import type { Platform } from '../src/platform/platform.ts';
import { scanSinkKind } from '../src/links/scans/scan-sink.ts';
import { conversionSinkKind } from '../src/links/conversions/conversion-sink.ts';
import { orphanVisitSinkKind } from '../src/links/orphans/orphan-visit-sink.ts';
import { webhookKind } from '../src/links/webhooks/webhook-worker.ts';
import { linkWebhookKind } from '../src/links/webhooks/link-webhook-worker.ts';
import { conversionWebhookKind } from '../src/links/webhooks/conversion-webhook-worker.ts';
import type { LinksServices } from '../src/links/wiring.ts';
import { automationKind } from '../src/mail/automations/run-actor.ts';
import { broadcastKind } from '../src/mail/broadcasts/broadcast-actor.ts';
import { mailSenderKind } from '../src/mail/sending/sender.ts';
import { mailWebhookKind } from '../src/mail/webhooks/mail-webhook-worker.ts';
import type { ServiceConfig } from '../src/service.ts';
import type { MailServices } from '../src/mail/wiring.ts';

export interface WorkerServices {
  platform: Platform;
  config: ServiceConfig;
  links: LinksServices;
  mail: MailServices;
}

export const workerKinds: Record<string, (services: WorkerServices) => WorkerKind> = {
  'links-scan-sink': ({ platform, links }) => scanSinkKind(platform.clickhouse, platform.pg, links.scanLimits, links.scanPrivacy),
  'links-conversion-sink': ({ platform }) => conversionSinkKind(platform.clickhouse, platform.pg),
  'links-orphan-visit-sink': ({ platform }) => orphanVisitSinkKind(platform.clickhouse, platform.pg),
  'links-webhooks': ({ platform, links }) => webhookKind(platform, links.webhookWorker),
  'links-link-events': ({ links }) => linkWebhookKind(links.linkEvents),
  'links-conversion-events': ({ links }) => conversionWebhookKind(links.webhooks.queue),
  'mail-sender': ({ platform, config, mail }) => mailSenderKind(platform, config, mail.events),
  'mail-broadcasts': ({ platform, config, mail }) => broadcastKind(platform, mail.messageOutbox, config),
  'mail-automations': ({ platform, config, mail }) => automationKind(platform, mail, config),
  'mail-webhooks': ({ platform, mail }) => mailWebhookKind(platform, mail.webhookWorker),
};

/** The names of the links kinds before they carried their product; accepted, with a warning, for one release. */
export const deprecatedKindNames: Readonly<Record<string, string>> = {
  'scan-sink': 'links-scan-sink',
  'conversion-sink': 'links-conversion-sink',
  webhooks: 'links-webhooks',
};

/** A kind's current name: itself, or the name a deprecated one stands for (undefined: no such kind). */
export function currentKindName(name: string): string | undefined {
  if (Object.hasOwn(workerKinds, name)) return name;
  return Object.hasOwn(deprecatedKindNames, name) ? deprecatedKindNames[name] : undefined;
}
