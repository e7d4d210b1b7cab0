// The mail product's services, made once per process from the platform's
// connections and the mail settings.
import type { Outbox } from '../platform/outbox/outbox.ts';
import type { Platform } from '../platform/platform.ts';
import { createPool, type Pool } from '../platform/postgres/pool.ts';
import { MailKeys } from './accounts/mail-keys.ts';
import { Organizations } from './accounts/organizations.ts';
import type { MailConfig } from './config.ts';
import { ContactProperties } from './audience/contact-properties.ts';
import { Contacts } from './audience/contacts.ts';
import { SegmentMembers } from './audience/segment-members.ts';
import { AutomationData } from './automations/automation-data.ts';
import { Automations } from './automations/automations.ts';
import { TriggerEvents } from './automations/trigger-events.ts';
import { Broadcasts } from './broadcasts/broadcasts.ts';
import { SubscriptionTopics } from './audience/subscription-topics.ts';
import { Domains } from './domains/domains.ts';
import { MailEventOutbox } from './events/mail-events.ts';
import { MessageOutbox } from './emails/message-outbox.ts';
import { Messages } from './emails/messages.ts';
import { Suppressions } from './suppressions/suppressions.ts';
import { allowanceSettings } from './sending/daily-allowances.ts';
import { RecipientLimits } from './sending/recipient-limits.ts';
import { Templates } from './templates/templates.ts';
import { webhookAllowHosts, webhookDispatcherOptions, webhookSenderOptions, type WebhookSettings } from '../platform/webhooks/webhook-settings.ts';
import { MailWebhookDeliveries, parseRetryDelays } from './webhooks/mail-webhook-deliveries.ts';
import { MailWebhookLog } from './webhooks/mail-webhook-log.ts';
import { MailWebhookStore } from './webhooks/mail-webhook-store.ts';
import type { MailWebhookWorkerOptions } from './webhooks/mail-webhook-worker.ts';

export interface MailServices {
  config: MailConfig;
  organizations: Organizations;
  keys: MailKeys;
  domains: Domains;
  suppressions: Suppressions;
  contacts: Contacts;
  /** Resend's contact properties: declared keys, types and fallback values. */
  contactProperties: ContactProperties;
  /** The contacts added to segments (Resend's member lists). */
  segmentMembers: SegmentMembers;
  subscriptionTopics: SubscriptionTopics;
  templates: Templates;
  messages: Messages;
  /** Publishes stored messages to mail.messages; its outbox is relayed by every ingress. */
  messageOutbox: MessageOutbox;
  broadcasts: Broadcasts;
  /** Publishes recorded mail events to mail.events. */
  events: MailEventOutbox;
  automations: Automations;
  /** POST /events: contacts, runs and their daily quotas. */
  triggerEvents: TriggerEvents;
  /** Publishes accepted events and run changes to their data topics. */
  automationData: AutomationData;
  /** The mail outboxes the ingress relays. */
  outboxes: Outbox[];
  /** The most recipients a message may have (its organization's smallest daily allowance). */
  recipientLimits: RecipientLimits;
  /** /webhooks: endpoints, their delivery log and deliveries; and the mail-webhooks worker's settings. */
  webhooks: { store: MailWebhookStore; log: MailWebhookLog; deliveries: MailWebhookDeliveries };
  webhookWorker: MailWebhookWorkerOptions;
}

/** The WEBHOOK_* settings (outbound rules, slots, timing) are shared with the link product's webhooks. */
export function wireMail(platform: Platform, config: MailConfig & WebhookSettings): MailServices {
  const { pg } = platform;
  const webhookDeliveries = new MailWebhookDeliveries(pg, parseRetryDelays(config.MAIL_WEBHOOK_RETRY_DELAYS_MS), platform.secrets);
  const publishing = outboxPool(platform);
  const messageOutbox = new MessageOutbox(publishing, platform.publisher, platform.log);
  const events = new MailEventOutbox(publishing, platform.publisher, platform.log);
  const automationData = new AutomationData(publishing, platform.publisher, platform.log);
  return {
    config,
    organizations: new Organizations(pg, config.ORG_DAILY_SEND_CAP),
    keys: new MailKeys(pg, config.MAIL_LOOKUP_CACHE_MS),
    domains: new Domains(pg, platform.secrets, config.MAIL_LOOKUP_CACHE_MS),
    suppressions: new Suppressions(pg),
    contacts: new Contacts(pg),
    contactProperties: new ContactProperties(pg),
    segmentMembers: new SegmentMembers(pg),
    subscriptionTopics: new SubscriptionTopics(pg),
    templates: new Templates(pg),
    messages: new Messages(pg),
    messageOutbox,
    broadcasts: new Broadcasts(pg, config.MAIL_RESEND_WAIT_HOURS),
    events,
    automations: new Automations(pg),
    triggerEvents: new TriggerEvents(pg, automationData, config.MAIL_AUTOMATION_MINUTE_MS),
    automationData,
    outboxes: [messageOutbox.outbox, events.outbox, ...automationData.outboxes],
    recipientLimits: new RecipientLimits(pg, allowanceSettings(config)),
    webhooks: {
      store: new MailWebhookStore(pg, { allowHosts: webhookAllowHosts(config), secretGraceMs: config.WEBHOOK_SECRET_GRACE_MS, secrets: platform.secrets }),
      log: new MailWebhookLog(pg),
      deliveries: webhookDeliveries,
    },
    // Resend's receivers may ask for a retry with 408 or 429; other 4xx answers are final.
    webhookWorker: { deliveries: webhookDeliveries, sender: webhookSenderOptions(config, [408, 429]), dispatcher: webhookDispatcherOptions(config) },
  };
}

/** Connections of the mail outboxes' publishers, which hold one across a Kafka send. */
const OUTBOX_POOL_SIZE = 4;
/** How long an outbox transaction may wait on its Kafka send before Postgres ends it (the rows go back to the relay). */
const OUTBOX_IDLE_IN_TRANSACTION_MS = 60_000;

/** The pool the mail outboxes publish on: their own connections, committing without waiting for the disk (row-outbox.ts). */
function outboxPool(platform: Platform): Pool {
  // A send may outlast a broker's failover; rows a stopped process holds meanwhile are only skipped by the relays.
  const pool = createPool(platform.config, { max: OUTBOX_POOL_SIZE, asynchronousCommit: true, idleInTransactionTimeoutMs: OUTBOX_IDLE_IN_TRANSACTION_MS, use: 'outbox' });
  platform.shutdown.add('mail outbox postgres', () => pool.end());
  return pool;
}
