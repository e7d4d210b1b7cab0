// The mail product's HTTP surface: its part of /api/v1 (behind mail API keys, by
// kind, and the per-key request limit), its operator routes under /admin/v1, its
// tools on the MCP endpoint (for mail keys), and its root routes in Resend's shapes (/emails, /emails/batch, /events,
// /webhooks, and Resend's other resources: resend/resend-resources.ts), so the Resend SDK pointed at this service
// works unchanged. Every mail route declares
// the access it needs (auth/permissions.ts); mail errors are Resend-shaped
// (http/mail-errors.ts).
import type { ApiProduct } from '../platform/http/api-shell.ts';
import type { AttemptGuard } from '../platform/http/attempt-guard.ts';
import { addComponents } from '../platform/http/components.ts';
import type { OpenApiProduct } from '../platform/http/openapi.ts';
import type { RootShortLinks } from '../platform/http/root-short-links.ts';
import type { App } from '../platform/http/server.ts';
import type { Platform } from '../platform/platform.ts';
import { mailAdminRoutes } from './accounts/admin-routes.ts';
import { createMailAuth, hasMailKey, MAIL_SECURITY_SCHEME, requireDeclaredAccess } from './auth/mail-auth.ts';
import { createKeyRequestLimit, type KeyRequestLimit } from './auth/key-request-limit.ts';
import { contactImportRoute } from './audience/contact-import-route.ts';
import { contactRoutes } from './audience/contact-routes.ts';
import { segmentRoutes } from './audience/segment-routes.ts';
import { subscriptionTopicRoutes } from './audience/subscription-topic-routes.ts';
import { automationRoutes } from './automations/automation-routes.ts';
import { triggerEventRoutes } from './automations/trigger-event-routes.ts';
import { broadcastRoutes } from './broadcasts/broadcast-routes.ts';
import { createResolver } from '../platform/dns.ts';
import { domainRoutes } from './domains/domain-routes.ts';
import { emailRoutes } from './emails/email-routes.ts';
import { suppressionRoutes } from './suppressions/suppression-routes.ts';
import { templateRoutes } from './templates/template-routes.ts';
import { trackingRoutes } from './tracking/tracking-routes.ts';
import { MailError, mailErrorHandler } from './http/mail-errors.ts';
import { mailMcpProduct } from './mcp/mail-mcp.ts';
import type { MailToolContext } from './mcp/mail-tool.ts';
import type { McpProduct } from '../platform/mcp/mcp-product.ts';
import { MessageChanges } from './emails/message-changes.ts';
import { defaultRequestsPerSecond } from './config.ts';
import { mailWebhookRoutes } from './webhooks/mail-webhook-routes.ts';
import { addIetfRateLimitHeaders } from './resend/ietf-rate-limit-headers.ts';
import { ResendError, resendErrorHandler } from './resend/resend-errors.ts';
import { resendResources } from './resend/resend-resources.ts';
import type { MailServices } from './wiring.ts';


/** The mail product's tags (one group in the OpenAPI document) and its key's security scheme. */
export const mailOpenApi: OpenApiProduct = {
  name: 'Mail',
  tags: [
    { name: 'emails', description: 'Single and batch sends in Resend\'s shapes, with idempotency keys.' },
    { name: 'domains', description: 'Sending domains, their DKIM keys and DNS records.' },
    { name: 'contacts', description: 'The audience: contacts and their bulk import.' },
    { name: 'topics', description: 'What broadcasts are about, and each contact\'s subscription.' },
    { name: 'segments', description: 'Named filters over contacts.' },
    { name: 'templates', description: 'Templates with versions and personalisation tags.' },
    { name: 'broadcasts', description: 'One message per eligible contact of a topic, with A/B subject tests, resends to non-openers and reports.' },
    { name: 'automations', description: 'Steps that send published templates, started by events.' },
    { name: 'events', description: 'Events that create contacts and start automation runs, within daily quotas.' },
    { name: 'mail-webhooks', description: 'Webhooks for mail events in Resend\'s shapes, signed with Standard Webhooks, with a delivery log and replay.' },
    { name: 'suppressions', description: 'Addresses no message is sent to.' },
    { name: 'tracking', description: 'The ends of the links in sent messages: open pixel, clicks, one-click unsubscribe (public, no key).' },
    { name: 'organizations', description: 'Operators: mail organizations, plans, daily caps and mail API keys (ADMIN_TOKEN).' },
    { name: 'resend-api-keys', description: 'Resend\'s /api-keys: the organization\'s keys, managed with one of its full keys.' },
    { name: 'resend-contacts', description: 'Resend\'s /contacts, by id or email, with their segments and topics, over the same contacts as /api/v1/contacts.' },
    { name: 'resend-contact-properties', description: 'Resend\'s /contact-properties: declared contact properties with a type and a fallback value.' },
    { name: 'resend-segments', description: 'Resend\'s /segments: lists of contacts, stored with /api/v1\'s filter segments (a segment holds its members and whom its filter matches).' },
    { name: 'resend-topics', description: 'Resend\'s /topics: created without a slug (derived from the name), over the same topics as /api/v1/topics.' },
    { name: 'resend-templates', description: 'Resend\'s /templates: an alias, From, Reply-To and {{{VARIABLES}}} with fallbacks, over the same templates and versions as /api/v1/templates.' },
    { name: 'resend-suppressions', description: 'Resend\'s /suppressions, one by one or 100 at once, over the same list as /api/v1/suppressions.' },
    { name: 'resend-broadcasts', description: 'Resend\'s /broadcasts: to a segment, with a topic or without, over the same broadcasts and worker as /api/v1/broadcasts.' },
    { name: 'resend-not-offered', description: 'Paths of Resend\'s SDK this service does not offer: 404 not_found in Resend\'s shape (not the link product\'s HTML 404).' },
    { name: 'resend-domains', description: 'Resend\'s /domains at the root, in Resend\'s shapes, over the same domains as /api/v1/domains.' },
  ],
  securitySchemes: {
    [MAIL_SECURITY_SCHEME]: { type: 'http', scheme: 'bearer', description: 'Mail API key (mk_live_…) of kind full, send or test.' },
  },
};

export interface MailHttp {
  api: ApiProduct;
  /** Its part of the MCP endpoint. */
  mcp: McpProduct<MailToolContext>;
  /** The per-key request limit, which the SMTP relay applies too. */
  keyLimit: KeyRequestLimit;
  /**
   * Registers the root routes (/emails, /events, /webhooks, Resend's other resources); call after
   * the API shell. `shortLinks` answers a request to Resend's one-segment paths that is a short link's.
   */
  registerRoot: (app: App, shortLinks: RootShortLinks) => Promise<void>;
}

export function mailHttp(platform: Platform, mail: MailServices, guard: AttemptGuard): MailHttp {
  const { pg, redis, log } = platform;
  const limit = createKeyRequestLimit(redis, log, mail.config);
  const authenticate = createMailAuth({ keys: mail.keys, guard, limitRequests: limit.limit });

  /** What every mail context shares: the request field, Resend-shaped errors, declared access. */
  const mailContext = (scope: App, handleErrors: typeof mailErrorHandler = mailErrorHandler) => {
    scope.decorateRequest('mailAuth', null as never);
    scope.decorateRequest('mailBatchReservation', null);
    scope.addHook('onResponse', limit.refundUnsettled);
    scope.setErrorHandler(handleErrors);
    scope.addHook('onRoute', requireDeclaredAccess);
    addComponents(scope, [MailError]);
  };
  /** Root routes need a mail key; they are documented with it. */
  const keyedRoot = (root: App) => {
    root.addHook('onRoute', (route) => {
      if (route.schema && route.schema.security === undefined) route.schema.security = [{ [MAIL_SECURITY_SCHEME]: [] }];
    });
    root.addHook('onRequest', authenticate);
  };
  const resolver = createResolver(mail.config.MAIL_DNS_SERVERS);

  const api: ApiProduct = {
    name: 'mail',
    securityScheme: MAIL_SECURITY_SCHEME,
    claims: hasMailKey,
    authenticate,
    register: async (scope) => {
      mailContext(scope);
      await domainRoutes(scope, { domains: mail.domains, pg, resolver });
      await suppressionRoutes(scope, { suppressions: mail.suppressions, pg });
      await contactRoutes(scope, { contacts: mail.contacts, contactProperties: mail.contactProperties, pg });
      await contactImportRoute(scope, { pg, maxBytes: mail.config.MAIL_IMPORT_MAX_BYTES, events: mail.events });
      await subscriptionTopicRoutes(scope, { subscriptionTopics: mail.subscriptionTopics, contacts: mail.contacts });
      await segmentRoutes(scope, { pg });
      await templateRoutes(scope, { templates: mail.templates, pg });
      await broadcastRoutes(scope, { broadcasts: mail.broadcasts, domains: mail.domains, templates: mail.templates, pg });
      await automationRoutes(scope, { automations: mail.automations, domains: mail.domains, templates: mail.templates, pg });
    },
    registerAdmin: async (admin) => {
      await mailAdminRoutes(admin, { organizations: mail.organizations, keys: mail.keys, domains: mail.domains });
    },
  };

  return {
    api,
    // Mail keys on POST /api/mcp: the same hook, so the same keys and the same per-key allowance as REST.
    mcp: mailMcpProduct({
      authenticate,
      domains: mail.domains,
      messages: mail.messages,
      outbox: mail.messageOutbox,
      changes: new MessageChanges(mail.messages.pg),
      recipientLimits: mail.recipientLimits,
      crashAfterStore: mail.config.MAIL_TEST_CRASH_AFTER_STORE,
      contacts: mail.contacts,
      contactProperties: mail.contactProperties,
      subscriptionTopics: mail.subscriptionTopics,
      broadcasts: mail.broadcasts,
      templates: mail.templates,
      suppressions: mail.suppressions,
      pg,
      requestsPerSecond: defaultRequestsPerSecond(mail.config),
    }),
    keyLimit: limit,
    registerRoot: async (app, shortLinks) => {
      // Resend's error names and statuses here too, as at Resend's other resources (our code in error.code).
      await app.register(async (root) => {
        mailContext(root, resendErrorHandler);
        addComponents(root, [ResendError]);
        // Before the key is asked for: on a branded link host /emails and /webhooks are the link product's, not the mail API.
        root.addHook('onRequest', shortLinks.hook);
        keyedRoot(root);
        await emailRoutes(root, { domains: mail.domains, messages: mail.messages, outbox: mail.messageOutbox, settleBatch: limit.settleBatch, crashAfterStore: mail.config.MAIL_TEST_CRASH_AFTER_STORE, recipientLimits: mail.recipientLimits, templates: mail.templates });
        await triggerEventRoutes(root, { triggerEvents: mail.triggerEvents });
        await mailWebhookRoutes(root, { ...mail.webhooks, pg });
      });
      // Resend's other resources, in Resend's shapes and with Resend's error names.
      await app.register(async (resend) => {
        mailContext(resend, resendErrorHandler);
        addComponents(resend, [ResendError]);
        // Before the key is asked for: a branded link host's /topics, or a keyless visit to an old short link /topics, is the link's.
        resend.addHook('onRequest', shortLinks.hook);
        keyedRoot(resend);
        resend.addHook('onSend', addIetfRateLimitHeaders);
        await resendResources(resend, { mail, pg, resolver, serviceHost: new URL(platform.config.PUBLIC_BASE_URL).host });
      });
      // The ends of the links in sent messages: public, no key, not the API's JSON.
      await app.register(async (open) => {
        await trackingRoutes(open, { pg, redis, events: mail.events, secret: mail.config.MAIL_LINK_SECRET, log });
      });
    },
  };
}
