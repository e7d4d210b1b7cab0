// Resend's /domains at the root, over the same store and operations as
// /api/v1/domains (domain-operations.ts): create with Resend's options, list,
// get with Resend's `records`, update the tracking switches, verify, remove.
import { Type } from '@sinclair/typebox';
import type { Resolver } from 'node:dns/promises';
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { Hostname, IdParams, Timestamp } from '../http/mail-schemas.ts';
import { RESEND_BODY_ERRORS, RESEND_ERRORS, resendErrorResponses } from '../resend/resend-errors.ts';
import { resendPage, ResendListOf, ResendPageQuery } from '../resend/resend-pages.ts';
import { createDomain, removeDomain, verifyDomain, visibleDomain } from './domain-operations.ts';
import { DOMAIN_STATUSES, type DomainRow, type Domains } from './domains.ts';
import { RESEND_REGIONS, toResendDomain, trackingHostAfter } from './resend-domain-shape.ts';

const Label = (description: string) => Type.String({ pattern: '^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$', description });
const Capabilities = Type.Object(
  { sending: Type.Optional(StringEnum(['enabled'] as const)), receiving: Type.Optional(StringEnum(['disabled'] as const, { description: 'Receiving mail is not offered.' })) },
  { additionalProperties: false },
);
const Tls = StringEnum(['opportunistic', 'enforced'] as const, { description: 'opportunistic only: enforced is 422 tls_enforced_not_offered.' });
const Tracking = {
  open_tracking: Type.Optional(Type.Boolean({ description: 'Opens and clicks are one switch here: equal to click_tracking when both are given.' })),
  click_tracking: Type.Optional(Type.Boolean()),
  tracking_subdomain: Type.Optional(Label('The tracking host is <tracking_subdomain>.<name>; point it at this service with a CNAME.')),
};

const ResendDnsRecord = Type.Object({
  record: Type.Literal('DKIM'),
  name: Type.String({ description: 'Relative to the domain.' }),
  type: Type.Literal('TXT'),
  ttl: Type.String(),
  status: StringEnum(DOMAIN_STATUSES),
  value: Type.String(),
});
const domainFields = {
  object: Type.Literal('domain'),
  id: Type.String(),
  name: Type.String(),
  status: StringEnum(DOMAIN_STATUSES),
  created_at: Timestamp(),
  region: StringEnum(RESEND_REGIONS, { description: 'Kept and answered; mail goes out from this installation.' }),
  capabilities: Type.Object({ sending: Type.Literal('enabled'), receiving: Type.Literal('disabled') }),
  open_tracking: Type.Boolean(),
  click_tracking: Type.Boolean(),
  tracking_subdomain: Type.Union([Type.String(), Type.Null()]),
};
const ResendDomainItem = Type.Object(domainFields, { $id: 'ResendDomainItem', title: 'ResendDomainItem' });
const ResendDomain = Type.Object({ ...domainFields, records: Type.Array(ResendDnsRecord) }, { $id: 'ResendDomain', title: 'ResendDomain' });
const ResendDomainList = ResendListOf(ref(ResendDomainItem), 'ResendDomainList');
const ResendDomainRef = Type.Object({ object: Type.Literal('domain'), id: Type.String() }, { $id: 'ResendDomainRef', title: 'ResendDomainRef' });
const ResendDomainRemoved = Type.Object({ object: Type.Literal('domain'), id: Type.String(), deleted: Type.Literal(true) }, { $id: 'ResendDomainRemoved', title: 'ResendDomainRemoved' });

function refuseEnforcedTls(tls: string | undefined): void {
  if (tls === 'enforced') throw new ApiError(422, 'tls_enforced_not_offered', 'The relay delivers with opportunistic TLS; enforced TLS per domain is not offered.', [{ path: '/tls', message: 'not offered' }]);
}

export async function resendDomainRoutes(app: App, deps: { domains: Domains; pg: Pool; resolver: Resolver; serviceHost: string }): Promise<void> {
  const { domains, pg, resolver, serviceHost } = deps;
  const tags = ['resend-domains'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [ResendDomainItem, ResendDomain, ResendDomainList, ResendDomainRef, ResendDomainRemoved]);

  app.post('/domains', {
    config,
    schema: {
      tags, operationId: 'resendCreateDomain', summary: 'Add a sending domain (Resend\'s domains.create)',
      description: 'Makes its DKIM key pair and answers the DNS records to publish. custom_return_path is accepted and not used: bounces return to this service\'s bounce address.',
      body: Type.Object({
        name: Hostname(),
        region: Type.Optional(StringEnum(RESEND_REGIONS)),
        custom_return_path: Type.Optional(Label('Accepted, not used.')),
        capabilities: Type.Optional(Capabilities),
        tls: Type.Optional(Tls),
        ...Tracking,
      }, { additionalProperties: false }),
      response: { 201: withRateLimitHeaders(ResendDomain, 'The new domain, pending.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    refuseEnforcedTls(request.body.tls);
    const name = request.body.name.toLowerCase();
    const trackingHost = trackingHostAfter(name, null, request.body, serviceHost);
    const row = await createDomain(domains, request.mailAuth, name, trackingHost, request.body.region);
    return reply.status(201).send(toResendDomain(row, true));
  });

  app.get('/domains', {
    config,
    schema: { tags, operationId: 'resendListDomains', summary: 'List sending domains', querystring: ResendPageQuery, response: { 200: withRateLimitHeaders(ResendDomainList, 'Newest first.'), ...resendErrorResponses(...RESEND_ERRORS, 400) } },
  }, async (request) => resendPage<DomainRow, ReturnType<typeof toResendDomain>>(pg, domains.listQuery(request.mailAuth.organizationId, request.mailAuth.domains), request.query, (row) => toResendDomain(row, false)));

  app.get('/domains/:id', {
    config,
    schema: { tags, operationId: 'resendGetDomain', summary: 'Get a sending domain with its DNS records', params: IdParams, response: { 200: withRateLimitHeaders(ResendDomain, 'The domain.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => toResendDomain(await visibleDomain(domains, request.mailAuth, request.params.id), true));

  app.patch('/domains/:id', {
    config,
    schema: {
      tags, operationId: 'resendUpdateDomain', summary: 'Change a domain\'s tracking', params: IdParams,
      body: Type.Object({ capabilities: Type.Optional(Capabilities), tls: Type.Optional(Tls), ...Tracking }, { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(ResendDomainRef, 'Updated.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await visibleDomain(domains, request.mailAuth, request.params.id);
    refuseEnforcedTls(request.body.tls);
    const host = trackingHostAfter(row.name, row.tracking_host, request.body, serviceHost);
    if (host !== row.tracking_host) await domains.setTrackingHost(row.organization_id, row.id, host);
    return { object: 'domain' as const, id: row.id };
  });

  app.post('/domains/:id/verify', {
    config,
    schema: {
      tags, operationId: 'resendVerifyDomain', summary: 'Check the domain\'s DKIM record now',
      description: 'Done before the answer (Resend checks later): GET the domain for its status.',
      params: IdParams,
      response: { 200: withRateLimitHeaders(ResendDomainRef, 'Checked.'), ...resendErrorResponses(...RESEND_ERRORS, 404) },
    },
  }, async (request) => {
    const { row } = await verifyDomain(domains, resolver, await visibleDomain(domains, request.mailAuth, request.params.id));
    return { object: 'domain' as const, id: row.id };
  });

  app.delete('/domains/:id', {
    config,
    schema: { tags, operationId: 'resendRemoveDomain', summary: 'Remove a sending domain', params: IdParams, response: { 200: withRateLimitHeaders(ResendDomainRemoved, 'Removed.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const row = await removeDomain(domains, request.mailAuth, request.params.id);
    return { object: 'domain' as const, id: row.id, deleted: true as const };
  });
}
