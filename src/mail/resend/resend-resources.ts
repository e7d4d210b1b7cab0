// Resend's resources at the root paths (/domains, /api-keys, /contacts, …): a
// second HTTP face of the mail product, in Resend's request and response shapes,
// over the same stores and operations as /api/v1. Registered in their own context
// (mail-http.ts) with Resend's error names (resend-errors.ts), pages
// (resend-pages.ts) and the IETF rate-limit headers. Every path registered here is
// a reserved first segment, so no short link can take it (platform/http/reserved-paths.ts).
import type { Resolver } from 'node:dns/promises';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { resendApiKeyRoutes } from '../accounts/resend-api-key-routes.ts';
import { resendContactPropertyRoutes } from '../audience/resend-contact-property-routes.ts';
import { resendContactRoutes } from '../audience/resend-contact-routes.ts';
import { resendContactSegmentRoutes } from '../audience/resend-contact-segment-routes.ts';
import { resendContactTopicRoutes } from '../audience/resend-contact-topic-routes.ts';
import { resendSegmentRoutes } from '../audience/resend-segment-routes.ts';
import { resendTopicRoutes } from '../audience/resend-topic-routes.ts';
import { resendBroadcastRoutes } from '../broadcasts/resend-broadcast-routes.ts';
import { resendDomainRoutes } from '../domains/resend-domain-routes.ts';
import { resendSuppressionRoutes } from '../suppressions/resend-suppression-routes.ts';
import { resendTemplateRoutes } from '../templates/resend-template-routes.ts';
import type { MailServices } from '../wiring.ts';
import { resendNotOfferedRoutes } from './resend-not-offered-routes.ts';

export interface ResendResourceDeps {
  mail: MailServices;
  pg: Pool;
  resolver: Resolver;
  /** This service's own host (PUBLIC_BASE_URL's): the tracking host of a domain given none. */
  serviceHost: string;
}

export async function resendResources(app: App, deps: ResendResourceDeps): Promise<void> {
  const { mail, pg, resolver, serviceHost } = deps;
  await resendDomainRoutes(app, { domains: mail.domains, pg, resolver, serviceHost });
  await resendApiKeyRoutes(app, { keys: mail.keys, domains: mail.domains, pg });
  const { contacts, contactProperties, segmentMembers, subscriptionTopics } = mail;
  await resendContactRoutes(app, { contacts, contactProperties, subscriptionTopics, pg });
  await resendContactSegmentRoutes(app, { contacts, segmentMembers, pg });
  await resendContactTopicRoutes(app, { contacts, subscriptionTopics, pg });
  await resendContactPropertyRoutes(app, { contactProperties, pg });
  await resendSegmentRoutes(app, { pg });
  await resendTopicRoutes(app, { subscriptionTopics, pg });
  await resendTemplateRoutes(app, { templates: mail.templates, pg });
  await resendSuppressionRoutes(app, { suppressions: mail.suppressions, pg });
  await resendBroadcastRoutes(app, { broadcasts: mail.broadcasts, domains: mail.domains, templates: mail.templates, subscriptionTopics, pg });
  await resendNotOfferedRoutes(app);
}
