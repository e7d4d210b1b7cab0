// Operators: mark a branded link domain verified without DNS (offline installs,
// tests), under /admin/v1 with ADMIN_TOKEN (src/platform/http/api-shell.ts).
import { Type } from '@sinclair/typebox';
import { addComponents, ref } from '../../platform/http/components.ts';
import { errorResponses } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import { domainOrRefused } from './domain-refusals.ts';
import { LINK_DOMAIN_COMPONENTS, LinkDomain, toLinkDomain } from './domain-schemas.ts';
import type { DomainRoutesDeps } from './domain-routes.ts';

export async function domainAdminRoutes(app: App, deps: Omit<DomainRoutesDeps, 'resolver'>): Promise<void> {
  addComponents(app, LINK_DOMAIN_COMPONENTS);
  app.post('/link-domains/:id/verify', {
    schema: {
      tags: ['link-domains'], security: [{ adminToken: [] }], operationId: 'markLinkDomainVerified', summary: 'Mark a branded link domain verified without a DNS check',
      description: 'For offline installs and tests, where the TXT record cannot be published. 409 domain_taken when another workspace verified the name.',
      params: Type.Object({ id: Type.String({ description: 'Link domain UUID.' }) }),
      response: { 200: ref(LinkDomain), ...errorResponses(401, 404, 409, 429) },
    },
  }, async (request) => {
    const row = domainOrRefused(await deps.domains.markVerified(request.params.id));
    await deps.onServedChange();
    return toLinkDomain(row, deps.targets);
  });
}
