// /api/v1/link-domains: a workspace's branded domains for its short links (the
// mail product's sending domains are /api/v1/domains). Adding one answers the
// DNS records to publish; verify looks up its TXT record.
import type { Resolver } from 'node:dns/promises';
import { Type } from '@sinclair/typebox';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { normalizeUrl } from '../short-links/url-rules.ts';
import { addComponents, ref } from '../../platform/http/components.ts';
import { API_BODY_ERRORS, API_ERRORS, errorResponses, withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import { checkVerification, type RoutingTargets } from './domain-dns.ts';
import { domainOrRefused } from './domain-refusals.ts';
import { CreateLinkDomainBody, LINK_DOMAIN_COMPONENTS, LinkDomain, LinkDomainCheck, LinkDomainList, toLinkDomain, UpdateLinkDomainBody } from './domain-schemas.ts';
import type { LinkDomains } from './link-domains.ts';

export interface DomainRoutesDeps {
  domains: LinkDomains;
  resolver: Resolver;
  targets: RoutingTargets;
  /** Called after a domain starts or stops being served (verified, deleted) or its fallbacks change, so this ingress serves it at once. */
  onServedChange: () => Promise<void>;
  /** Why a URL may not be a destination (as links' destinations are checked); undefined when it may. */
  urlProblem: (value: string) => string | undefined;
}

const IdParams = Type.Object({ id: Type.String({ description: 'Link domain UUID, in any case.' }) });

export async function domainRoutes(app: App, deps: DomainRoutesDeps): Promise<void> {
  const { domains, resolver, targets } = deps;
  const tags = ['link-domains'];
  addComponents(app, LINK_DOMAIN_COMPONENTS);
  const present = (row: Parameters<typeof toLinkDomain>[0]) => toLinkDomain(row, targets);

  app.post('/link-domains', {
    schema: {
      tags, operationId: 'createLinkDomain', summary: 'Add a branded domain for short links',
      description: 'Answers the domain, pending, with the DNS records to publish (a TXT record that proves it is yours, and the CNAME or A records that send its visitors here); then call verify. ' +
        'Links may be created on it at once; they redirect once it is verified. 400 domain_reserved for the service\'s own host names, 409 domain_exists (already added), domain_taken (verified by another workspace), domain_limit_reached.',
      body: ref(CreateLinkDomainBody),
      response: { 201: withRateLimitHeaders(LinkDomain, 'The new domain, pending.'), ...errorResponses(...API_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    const row = domainOrRefused(await domains.create(request.linksAuth.workspaceId, request.body.name, request.body.isDefault ?? false));
    return reply.status(201).send(present(row));
  });

  app.get('/link-domains', {
    schema: {
      tags, operationId: 'listLinkDomains', summary: 'List branded domains',
      response: { 200: withRateLimitHeaders(LinkDomainList, 'Every domain of the workspace (at most 100), the default first.'), ...errorResponses(...API_ERRORS) },
    },
  }, async (request) => ({ object: 'list' as const, data: (await domains.list(request.linksAuth.workspaceId)).map(present) }));

  app.get('/link-domains/:id', {
    schema: { tags, operationId: 'getLinkDomain', summary: 'Get a branded domain', params: IdParams, response: { 200: withRateLimitHeaders(LinkDomain, 'The domain.'), ...errorResponses(...API_ERRORS, 404) } },
  }, async (request) => {
    const row = await domains.get(request.linksAuth.workspaceId, request.params.id);
    if (!row) throw notFound('link domain');
    return present(row);
  });

  /** A fallback URL as stored (normalised like a destination), null to clear, undefined when not named; 400 invalid_url for one a link could not have. */
  const fallback = (field: 'rootUrl' | 'notFoundUrl', value: string | null | undefined): string | null | undefined => {
    if (value === undefined || value === null) return value;
    const problem = deps.urlProblem(value);
    if (problem) throw new ApiError(400, 'invalid_url', `${field} ${problem}.`, [{ path: `/${field}`, message: problem }]);
    return normalizeUrl(value);
  };

  app.patch('/link-domains/:id', {
    schema: {
      tags, operationId: 'updateLinkDomain', summary: 'Change a domain: the workspace\'s default, where its root and unknown short IDs redirect',
      description: 'Changes only what the body names. `rootUrl`: GET / on the domain redirects there (302); `notFoundUrl`: a short ID no link has on the domain redirects there (302, without a click ID); null clears either (404 again). Both visits are recorded as orphan visits (GET /api/v1/analytics/orphan-visits). The URLs are checked like a link\'s destination: 400 invalid_url. Every ingress serves the change within seconds (this one at once).',
      params: IdParams, body: ref(UpdateLinkDomainBody),
      response: { 200: withRateLimitHeaders(LinkDomain, 'The domain.'), ...errorResponses(...API_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const { isDefault } = request.body;
    const rootUrl = fallback('rootUrl', request.body.rootUrl);
    const notFoundUrl = fallback('notFoundUrl', request.body.notFoundUrl);
    const row = domainOrRefused(await domains.update(request.linksAuth.workspaceId, request.params.id, {
      ...(isDefault !== undefined ? { isDefault } : {}),
      ...(rootUrl !== undefined ? { rootUrl } : {}),
      ...(notFoundUrl !== undefined ? { notFoundUrl } : {}),
    }));
    if (rootUrl !== undefined || notFoundUrl !== undefined) await deps.onServedChange();
    return present(row);
  });

  app.post('/link-domains/:id/verify', {
    schema: {
      tags, operationId: 'verifyLinkDomain', summary: 'Look up the domain\'s verification record now',
      description: 'Verified when the TXT record holds this domain\'s value (then it serves redirects, on every ingress within seconds); failed when it is missing or another value; a lookup DNS does not answer changes nothing. A verified domain stays verified. 409 domain_taken when another workspace verified the name first.',
      params: IdParams,
      response: { 200: withRateLimitHeaders(LinkDomainCheck, 'What the lookup found, and the domain.'), ...errorResponses(...API_ERRORS, 404, 409) },
    },
  }, async (request) => {
    const row = await domains.get(request.linksAuth.workspaceId, request.params.id);
    if (!row) throw notFound('link domain');
    const check = await checkVerification(resolver, row);
    if (check.txt === 'lookup_failed') return { domain: present(row), ...check };
    if (check.txt !== 'verified') return { domain: present((await domains.recordFailedCheck(row.id)) ?? row), ...check };
    const verified = domainOrRefused(await domains.markVerified(row.id));
    await deps.onServedChange();
    return { domain: present(verified), ...check };
  });

  app.delete('/link-domains/:id', {
    schema: {
      tags, operationId: 'deleteLinkDomain', summary: 'Delete a branded domain',
      description: 'Refused with 409 domain_in_use while active links use it. Its deactivated links keep their short URL but never redirect; the name may be added again.',
      params: IdParams,
      response: { 200: withRateLimitHeaders(LinkDomain, 'The deleted domain.'), ...errorResponses(...API_ERRORS, 404, 409) },
    },
  }, async (request) => {
    const row = domainOrRefused(await domains.delete(request.linksAuth.workspaceId, request.params.id));
    await deps.onServedChange();
    return present(row);
  });
}
