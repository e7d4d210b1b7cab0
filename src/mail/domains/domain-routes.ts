// /api/v1/domains: an organization's sending domains (FULL keys; a domain-restricted
// key sees only its domains). Creating one makes its DKIM key pair and lists the
// DNS records to publish.
import { Type } from '@sinclair/typebox';
import { addComponents, ref } from '../../platform/http/components.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { MailKeyGrant } from '../accounts/mail-keys.ts';
import { MAIL_BODY_ERRORS, MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import { Hostname, IdParams, NullableTimestamp, Timestamp } from '../http/mail-schemas.ts';
import { page, PageOf, PageQuery } from '../http/pagination.ts';
import { toDomain, type DomainRow, type Domains } from './domains.ts';
import { createDomain, removeDomain, verifyDomain, visibleDomain } from './domain-operations.ts';
import type { Resolver } from 'node:dns/promises';
import { StringEnum } from '../../platform/http/schema-types.ts';
import { DOMAIN_STATUSES } from './domains.ts';

const DnsRecordSchema = Type.Object({
  record: StringEnum(['dkim', 'tracking'] as const, { description: 'What the record is for.' }),
  type: StringEnum(['TXT', 'CNAME'] as const),
  name: Type.String(),
  value: Type.String(),
});

export const DomainSchema = Type.Object(
  {
    object: Type.Literal('domain'),
    id: Type.String(),
    name: Type.String(),
    status: StringEnum(DOMAIN_STATUSES, { description: 'pending until its DNS records are found (or an operator verifies it); a From address must be on a verified domain.' }),
    tracking_host: Type.Union([Type.String(), Type.Null()], { description: 'Host name for open and click tracking and unsubscribe links; null: no tracking.' }),
    records: Type.Array(DnsRecordSchema),
    verified_at: NullableTimestamp(),
    last_checked_at: NullableTimestamp(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Domain', title: 'Domain' },
);
const DomainList = PageOf(ref(DomainSchema), 'DomainList');
const DomainCheck = Type.Object(
  {
    domain: ref(DomainSchema),
    dkim: StringEnum(['verified', 'missing', 'mismatch', 'lookup_failed'] as const, { description: 'lookup_failed leaves the status as it was: DNS could not answer.' }),
    detail: Type.String(),
  },
  { $id: 'DomainCheck', title: 'DomainCheck' },
);

export async function domainRoutes(app: App, deps: { domains: Domains; pg: Pool; resolver: Resolver }): Promise<void> {
  const { domains, pg, resolver } = deps;
  const tags = ['domains'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [DomainSchema, DomainList, DomainCheck]);

  const visible = (request: { mailAuth: MailKeyGrant }, id: string): Promise<DomainRow> => visibleDomain(domains, request.mailAuth, id);

  app.post('/domains', {
    config,
    schema: {
      tags, operationId: 'createDomain', summary: 'Add a sending domain',
      description: 'Creates its DKIM key pair; publish the returned `records`, then call verify.',
      body: Type.Object({ name: Hostname(), tracking_host: Type.Optional(Type.Union([Hostname(), Type.Null()])) }, { additionalProperties: false }),
      response: { 201: withRateLimitHeaders(DomainSchema, 'The new domain, pending.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    const row = await createDomain(domains, request.mailAuth, request.body.name, request.body.tracking_host?.toLowerCase() ?? null);
    return reply.status(201).send(toDomain(row));
  });

  app.get('/domains', {
    config,
    schema: { tags, operationId: 'listDomains', summary: 'List sending domains', querystring: PageQuery, response: { 200: withRateLimitHeaders(DomainList, 'A page of domains, newest first.'), ...mailErrorResponses(...MAIL_ERRORS, 400) } },
  }, async (request) => page(pg, { ...domains.listQuery(request.mailAuth.organizationId, request.mailAuth.domains), ...request.query }, toDomain));

  app.get('/domains/:id', {
    config,
    schema: { tags, operationId: 'getDomain', summary: 'Get a sending domain', params: IdParams, response: { 200: withRateLimitHeaders(DomainSchema, 'The domain.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => toDomain(await visible(request, request.params.id)));

  app.patch('/domains/:id', {
    config,
    schema: {
      tags, operationId: 'updateDomain', summary: 'Change the tracking host of a domain', params: IdParams,
      body: Type.Object({ tracking_host: Type.Union([Hostname(), Type.Null()]) }, { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(DomainSchema, 'The domain.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await visible(request, request.params.id);
    return toDomain((await domains.setTrackingHost(row.organization_id, row.id, request.body.tracking_host?.toLowerCase() ?? null))!);
  });

  app.post('/domains/:id/verify', {
    config,
    schema: {
      tags, operationId: 'verifyDomain', summary: 'Check the domain\'s DNS records now',
      description: 'Looks up the DKIM TXT record: verified when it carries this domain\'s key, failed when it is missing or another key; a lookup that fails leaves the status as it was.',
      params: IdParams,
      response: { 200: withRateLimitHeaders(DomainCheck, 'The outcome and the domain.'), ...mailErrorResponses(...MAIL_ERRORS, 404) },
    },
  }, async (request) => {
    const { row, check } = await verifyDomain(domains, resolver, await visible(request, request.params.id));
    return { domain: toDomain(row), ...check };
  });

  app.delete('/domains/:id', {
    config,
    schema: { tags, operationId: 'deleteDomain', summary: 'Remove a sending domain', params: IdParams, response: { 200: withRateLimitHeaders(DomainSchema, 'The removed domain.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => toDomain(await removeDomain(domains, request.mailAuth, request.params.id)));
}
