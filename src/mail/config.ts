// The mail product's settings, checked like the platform's and combined with
// them by loadConfig.
import { Type, type Static } from '@sinclair/typebox';
import type { ProductSettings } from '../platform/config.ts';

export const MailConfigSchema = Type.Object({
  /** Requests per second per mail API key unless the key has its own cap (spec: 10; blank or 0 means 10). */
  API_RATE_LIMIT_PER_SEC: Type.Integer({ minimum: 0, maximum: 1000, default: 0 }),
  /** Where the sender hands messages over (SMTP relay or the local sink). */
  SMTP_URL: Type.String({ pattern: '^smtps?://', default: 'smtp://127.0.0.1:2525', secret: true }),
  /** How long an ingress may answer from what it read about a key or an organization's verified domains (0: read on every request); a revocation or a domain change made elsewhere applies after at most this long. */
  MAIL_LOOKUP_CACHE_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
  /** DNS servers for domain verification (ip or ip:port, comma-separated); empty: the system resolver. */
  MAIL_DNS_SERVERS: Type.String({ pattern: '^[0-9a-fA-F.:\\[\\], ]*$', default: '' }),
  /** The largest contact import body (CSV or NDJSON), in bytes. */
  MAIL_IMPORT_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 16 * 1024 ** 3, default: 1024 ** 3 }),
  /** Messages per second the whole platform hands over, whatever the number of sender processes (spec: 12). */
  MAIL_SEND_RATE_PER_SEC: Type.Integer({ minimum: 1, maximum: 10_000, default: 12 }),
  /** The daily cap of an organization on a plan without a ceiling whose own cap is blank (spec: 20,000). */
  ORG_DAILY_SEND_CAP: Type.Integer({ minimum: 1, maximum: 100_000_000, default: 20_000 }),
  /** Emails per UTC day across every organization (spec: the platform account's 45,000). */
  PLATFORM_DAILY_SEND_CAP: Type.Integer({ minimum: 1, maximum: 100_000_000, default: 45_000 }),
  /** A domain's daily allowance by stage (comma-separated, rising): stage n applies after n earlier UTC days on which it sent. */
  MAIL_WARMUP_STAGES: Type.String({ pattern: '^[0-9]+(,[0-9]+)*$', default: '200,500,1000,2000,5000,10000,20000' }),
  /** The first retry's delay after a transient failure; each next one doubles (spec: 30 s, 4 attempts in all). */
  MAIL_RETRY_BASE_MS: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 30_000 }),
  /** Hand-overs one sender process runs at once (each for another organization). */
  MAIL_SEND_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 4 }),
  /** How long a sender holds a message it is handing over; a sender that died leaves it to another after this. */
  MAIL_SEND_LEASE_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 60_000 }),
  /** Signs the links in sent messages (open pixel, clicks, unsubscribe): a link cannot be made or altered without it. */
  MAIL_LINK_SECRET: Type.String({ minLength: 16, default: 'development-mail-link-secret', secret: true }),
  /** The domain of every message's return path (envelope sender bounces+<message id>-<signature>@…), whose MX points at the inbound SMTP address; empty: the message's From domain. */
  MAIL_BOUNCE_DOMAIN: Type.String({ pattern: '^([A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+)?$', default: '' }),
  /** Where the ingress receives bounce and complaint reports over SMTP (inbound-smtp.ts). */
  MAIL_INBOUND_SMTP_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  /** Its port; 0 takes any free port, -1 runs no inbound SMTP in this process (another ingress does). */
  MAIL_INBOUND_SMTP_PORT: Type.Integer({ minimum: -1, maximum: 65535, default: 2526 }),
  /** The SMTP relay (submission with STARTTLS and AUTH by mail API key; relay/smtp-relay.ts), run by the ingress. */
  MAIL_RELAY_SMTP_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  /** Its port; 0 takes any free port, -1 runs no relay in this process. */
  MAIL_RELAY_SMTP_PORT: Type.Integer({ minimum: -1, maximum: 65535, default: 2587 }),
  /** PEM files of its STARTTLS certificate; both empty outside production: a self-signed one is made in .stack/relay-tls. */
  MAIL_RELAY_TLS_KEY_FILE: Type.String({ default: '' }),
  MAIL_RELAY_TLS_CERT_FILE: Type.String({ default: '' }),
  /** Hours after a broadcast finished before its resend may go out (spec: Resend rule 5); 0: no wait. */
  MAIL_RESEND_WAIT_HOURS: Type.Number({ minimum: 0, maximum: 8760, default: 24 }),
  /** The length of a minute of an A/B test's wait_minutes; shorter only to test the wait without waiting half an hour. */
  MAIL_AB_MINUTE_MS: Type.Integer({ minimum: 1, maximum: 60_000, default: 60_000 }),
  /** Contacts per fan-out batch (one transaction each) of a broadcast; smaller in tests, so a small audience crosses as many batches. */
  MAIL_FANOUT_BATCH: Type.Integer({ minimum: 1, maximum: 10_000, default: 500 }),
  /** Bytes of messages per fan-out batch, at most (one contact's at least); smaller in tests, so a few large messages cross as many batches. */
  MAIL_FANOUT_BATCH_BYTES: Type.Integer({ minimum: 1024 * 1024, maximum: 256 * 1024 * 1024, default: 64 * 1024 * 1024 }),
  /** The length of a minute of an automation step's delay_minutes; shorter only to test delays without waiting. */
  MAIL_AUTOMATION_MINUTE_MS: Type.Integer({ minimum: 1, maximum: 60_000, default: 60_000 }),
  /** Mail webhooks: the wait after each failed attempt, in ms (attempts = delays + 1); by default Resend's schedule, about a day. */
  MAIL_WEBHOOK_RETRY_DELAYS_MS: Type.String({ pattern: '^[0-9]+(,[0-9]+)*$', default: '5000,300000,1800000,7200000,18000000,36000000,36000000' }),
  /** Tests only (NODE_ENV=test): the ingress kills itself right after storing a message, before publishing it. */
  MAIL_TEST_CRASH_AFTER_STORE: Type.Boolean({ default: false }),
});

export type MailConfig = Static<typeof MailConfigSchema>;

/** The platform default per-key request cap: API_RATE_LIMIT_PER_SEC, where 0 (or unset) means the spec's 10. */
export const defaultRequestsPerSecond = (config: MailConfig): number => config.API_RATE_LIMIT_PER_SEC || 10;

export const mailSettings: ProductSettings<typeof MailConfigSchema> = {
  product: 'mail',
  schema: MailConfigSchema,
  check: (config) => [
    ...(config.MAIL_TEST_CRASH_AFTER_STORE && config.NODE_ENV !== 'test' ? ['MAIL_TEST_CRASH_AFTER_STORE is for tests only (NODE_ENV=test)'] : []),
    ...(config.NODE_ENV === 'production' && config.MAIL_LINK_SECRET === 'development-mail-link-secret' ? ['MAIL_LINK_SECRET must be set in production'] : []),
  ],
};
