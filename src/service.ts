// The products this service hosts, in one place: their settings, topics and sealed columns.
// The entry points (src/main.ts, workers/) start the platform from here; the
// platform itself knows no product.
import { loadConfig, type Config } from './platform/config.ts';
import type { TopicDefinition } from './platform/kafka/topic-definition.ts';
import type { SealedColumn } from './platform/secrets/sealed-columns.ts';
import { linksSettings, type LinksConfig } from './links/config.ts';
import { linkSealedColumns } from './links/sealed-columns.ts';
import { mailSettings, type MailConfig } from './mail/config.ts';
import { mailSealedColumns } from './mail/sealed-columns.ts';
import { linkTopics } from '../topics/links.ts';
import { mailTopics } from '../topics/mail.ts';

export type ServiceConfig = Config & LinksConfig & MailConfig;

/** Reads and checks the platform's and every product's settings; throws ConfigError naming each bad variable. */
export const loadServiceConfig = (env: NodeJS.ProcessEnv = process.env): ServiceConfig => loadConfig(env, [linksSettings, mailSettings] as const);

/** Every product's topics, created and registered at start. */
export const serviceTopics: readonly TopicDefinition[] = [...linkTopics, ...mailTopics];

/** Every product's columns kept sealed at rest: sealed at start when still clear, resealed by src/reseal-secrets.ts. */
export const serviceSealedColumns: readonly SealedColumn[] = [...linkSealedColumns, ...mailSealedColumns];

/** The OpenAPI document's title and description: the whole service. */
export const SERVICE_INFO = {
  title: 'linkmail API',
  version: '1.0.0',
  description:
    'Two products on one platform, each with its own keys and tag group. Links: dynamic short links with QR codes, scan analytics, conversions and signed scan webhooks. ' +
    'Mail: sending domains, audience, templates, and single and batch sends in Resend\'s shapes with idempotency keys. ' +
    'Errors share one object: `{ "error": { "code", "message", "requestId", "details"? } }`; mail errors also carry Resend\'s `statusCode`, `name` (the code) and `message` at the top.',
};

/** The MCP discovery document's words for the whole service (each product describes its own tools). */
export const MCP_SERVICE_INFO = {
  name: 'linkmail',
  title: 'linkmail: short links and mail for assistants',
  version: '1.0.0',
  description: 'One MCP endpoint for two products: a link key (lk_live_…) gets the short-link tools of its workspace, a mail key (mk_live_…) the mail tools its kind may use, for its organization.',
};
