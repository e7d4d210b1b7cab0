// Every worker kind of the service. `workers/all.ts` runs them all in one
// process; `workers/run.ts <kind>` runs one. Products add their kinds here;
// each is built from the product's services (its wiring), made once per process.
import type { WorkerKind } from '../src/platform/actors/worker-kind.ts';
import type { Platform } from '../src/platform/platform.ts';
import { scanSinkKind } from '../src/links/scans/scan-sink.ts';
import { conversionSinkKind } from '../src/links/conversions/conversion-sink.ts';
import { webhookKind } from '../src/links/webhooks/webhook-worker.ts';
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
  'scan-sink': ({ platform, links }) => scanSinkKind(platform.clickhouse, platform.pg, links.scanLimits),
  'conversion-sink': ({ platform }) => conversionSinkKind(platform.clickhouse, platform.pg),
  webhooks: ({ platform, links }) => webhookKind(platform, links.webhookWorker),
  'mail-sender': ({ platform, config, mail }) => mailSenderKind(platform, config, mail.events),
  'mail-broadcasts': ({ platform, config, mail }) => broadcastKind(platform, mail.queue, config),
  'mail-automations': ({ platform, config, mail }) => automationKind(platform, mail, config),
  'mail-webhooks': ({ platform, mail }) => mailWebhookKind(platform, mail.webhookWorker),
};
