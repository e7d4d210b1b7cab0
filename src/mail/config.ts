// The mail product's settings, checked like the platform's and combined with
// them by loadConfig.
import { Type, type Static } from '@sinclair/typebox';
import type { ProductSettings } from '../platform/config.ts';

export const MailConfigSchema = Type.Object({
  /** Requests per second per mail API key unless the key has its own cap (spec: 10; blank or 0 means 10). */
  API_RATE_LIMIT_PER_SEC: Type.Integer({ minimum: 0, maximum: 1000, default: 0 }),
  /** Where the sender hands messages over (SMTP relay or the local sink). */
  SMTP_URL: Type.String({ pattern: '^smtps?://', default: 'smtp://127.0.0.1:2525' }),
  /** How long an ingress may answer from what it read about a key or an organization's verified domains (0: read on every request); a revocation or a domain change made elsewhere applies after at most this long. */
  MAIL_LOOKUP_CACHE_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
  /** DNS servers for domain verification (ip or ip:port, comma-separated); empty: the system resolver. */
  MAIL_DNS_SERVERS: Type.String({ pattern: '^[0-9a-fA-F.:\\[\\], ]*$', default: '' }),
  /** The largest contact import body (CSV or NDJSON), in bytes. */
  MAIL_IMPORT_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 16 * 1024 ** 3, default: 1024 ** 3 }),
  /** Tests only (NODE_ENV=test): the ingress kills itself right after storing a message, before publishing it. */
  MAIL_TEST_CRASH_AFTER_STORE: Type.Boolean({ default: false }),
});

export type MailConfig = Static<typeof MailConfigSchema>;

/** The platform default per-key request cap: API_RATE_LIMIT_PER_SEC, where 0 (or unset) means the spec's 10. */
export const defaultRequestsPerSecond = (config: MailConfig): number => config.API_RATE_LIMIT_PER_SEC || 10;

export const mailSettings: ProductSettings<typeof MailConfigSchema> = {
  product: 'mail',
  schema: MailConfigSchema,
  check: (config) => (config.MAIL_TEST_CRASH_AFTER_STORE && config.NODE_ENV !== 'test' ? ['MAIL_TEST_CRASH_AFTER_STORE is for tests only (NODE_ENV=test)'] : []),
};
