// The mail product's operator endpoints under /admin/v1 (behind ADMIN_TOKEN, see
// the platform's API shell): organizations and their plans and daily caps, mail API
// keys, and marking a domain verified without DNS (tests, offline installs).
import { Type } from '@sinclair/typebox';
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { errorResponses } from '../../platform/http/openapi.ts';
import { Name, StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import { isUuid } from '../../platform/http/validation.ts';
import { DomainSchema } from '../domains/domain-routes.ts';
import { toDomain, type Domains } from '../domains/domains.ts';
import { Hostname, NullableTimestamp, Timestamp } from '../http/mail-schemas.ts';
import { PageOf, PageQuery } from '../http/pagination.ts';
import { KEY_KINDS, type MailKeys } from './mail-keys.ts';
import type { Organizations } from './organizations.ts';
import { PLAN_CEILING, PLANS, type Plan } from './plans.ts';

const PlanSchema = StringEnum(PLANS, { description: 'free: at most 100 emails per UTC day; pro: no ceiling (20,000 per day unless daily_send_cap says otherwise).' });
const Cap = Type.Integer({ minimum: 0, maximum: 100_000_000 });
const OrganizationSchema = Type.Object(
  {
    object: Type.Literal('organization'),
    id: Type.String(),
    name: Type.String(),
    plan: PlanSchema,
    daily_send_cap: Type.Union([Cap, Type.Null()], { description: 'As set: null is the plan\'s default; with a ceiling (free) 0 also means the ceiling and a value only lowers it; without one, 0 is no cap.' }),
    effective_daily_send_cap: Type.Union([Type.Integer(), Type.Null()], { description: 'Emails (recipients) per UTC day that apply; null: no cap.' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'MailOrganization', title: 'MailOrganization' },
);
const MailKeySchema = Type.Object(
  {
    object: Type.Literal('api_key'),
    id: Type.String(),
    organization_id: Type.String(),
    name: Type.String(),
    kind: StringEnum(KEY_KINDS),
    domains: Type.Union([Type.Array(Type.String()), Type.Null()]),
    rate_limit: Type.Union([Type.Integer(), Type.Null()]),
    prefix: Type.String(),
    created_at: Timestamp(),
    last_used_at: NullableTimestamp(),
    revoked_at: NullableTimestamp(),
  },
  { $id: 'MailApiKey', title: 'MailApiKey' },
);
// Paged as every mail list: newest first, ?limit= 1 to 100 (default 20), ?cursor= the previous page's next_cursor.
const OrganizationList = PageOf(ref(OrganizationSchema), 'MailOrganizationList');
const MailKeyList = PageOf(ref(MailKeySchema), 'MailApiKeyList');
const IssuedMailKey = Type.Object({ key: Type.String({ description: 'The secret key (mk_live_…), shown once.' }), api_key: ref(MailKeySchema) }, { $id: 'IssuedMailApiKey', title: 'IssuedMailApiKey' });

const ADMIN_ERRORS = [401, 404, 429] as const;
const ADMIN_BODY_ERRORS = [...ADMIN_ERRORS, 400, 413, 415] as const;
const OrgParams = Type.Object({ organizationId: Type.String() });

/** With a plan ceiling, a cap can only lower it. */
function checkCap(plan: Plan, cap: number | null | undefined): void {
  const ceiling = PLAN_CEILING[plan];
  if (ceiling !== null && typeof cap === 'number' && cap > ceiling) {
    throw new ApiError(400, 'cap_above_ceiling', `The ${plan} plan sends at most ${ceiling} emails a day; daily_send_cap can only lower that.`, [{ path: '/daily_send_cap', message: `at most ${ceiling}` }]);
  }
}

export async function mailAdminRoutes(app: App, deps: { organizations: Organizations; keys: MailKeys; domains: Domains }): Promise<void> {
  const { organizations, keys, domains } = deps;
  const tags = ['organizations'];
  const security = [{ adminToken: [] }];
  addComponents(app, [OrganizationSchema, MailKeySchema, OrganizationList, MailKeyList, IssuedMailKey, DomainSchema]);

  const organizationOf = async (id: string) => {
    const org = isUuid(id) ? await organizations.get(id) : undefined;
    if (!org) throw notFound('organization');
    return org;
  };

  app.post('/organizations', {
    schema: {
      tags, security, operationId: 'createOrganization', summary: 'Create a mail organization',
      body: Type.Object({ name: Name(120), plan: PlanSchema, daily_send_cap: Type.Optional(Type.Union([Cap, Type.Null()])) }, { additionalProperties: false }),
      response: { 201: ref(OrganizationSchema), ...errorResponses(...ADMIN_BODY_ERRORS) },
    },
  }, async (request, reply) => {
    checkCap(request.body.plan, request.body.daily_send_cap);
    return reply.status(201).send(await organizations.create(request.body.name, request.body.plan, request.body.daily_send_cap ?? null));
  });

  app.get('/organizations', {
    schema: { tags, security, operationId: 'listOrganizations', summary: 'List mail organizations', description: 'Newest first.', querystring: PageQuery, response: { 200: ref(OrganizationList), ...errorResponses(...ADMIN_ERRORS, 400) } },
  }, async (request) => organizations.list(request.query.limit, request.query.cursor));

  app.get('/organizations/:organizationId', {
    schema: { tags, security, operationId: 'getOrganization', summary: 'Get a mail organization', params: OrgParams, response: { 200: ref(OrganizationSchema), ...errorResponses(...ADMIN_ERRORS) } },
  }, async (request) => organizationOf(request.params.organizationId));

  app.patch('/organizations/:organizationId', {
    schema: {
      tags, security, operationId: 'updateOrganization', summary: 'Change the plan or the daily send cap of an organization', params: OrgParams,
      body: Type.Object({ plan: Type.Optional(PlanSchema), daily_send_cap: Type.Optional(Type.Union([Cap, Type.Null()])) }, { additionalProperties: false, minProperties: 1 }),
      response: { 200: ref(OrganizationSchema), ...errorResponses(...ADMIN_BODY_ERRORS) },
    },
  }, async (request) => {
    const org = await organizationOf(request.params.organizationId);
    checkCap(request.body.plan ?? org.plan, request.body.daily_send_cap);
    return (await organizations.update(org.id, request.body))!;
  });

  app.post('/organizations/:organizationId/keys', {
    schema: {
      tags, security, operationId: 'createMailApiKey', summary: 'Issue a mail API key',
      description: 'The `key` is returned only in this response; it is stored as a SHA-256 hash. `kind`: full, send or test (see the permission matrix); `domains` restricts the key to those sending domains; `rate_limit` is its own requests per second (1 to 1000) instead of the platform default.',
      params: OrgParams,
      body: Type.Object(
        {
          name: Name(120),
          kind: StringEnum(KEY_KINDS),
          domains: Type.Optional(Type.Array(Hostname(), { minItems: 1, maxItems: 100 })),
          rate_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
        },
        { additionalProperties: false },
      ),
      response: { 201: ref(IssuedMailKey), ...errorResponses(...ADMIN_BODY_ERRORS) },
    },
  }, async (request, reply) => {
    await organizationOf(request.params.organizationId);
    const { key, info } = await keys.create(request.params.organizationId, request.body);
    return reply.status(201).send({ key, api_key: info });
  });

  app.get('/organizations/:organizationId/keys', {
    schema: { tags, security, operationId: 'listMailApiKeys', summary: 'List mail API keys (without secrets)', description: 'Newest first.', params: OrgParams, querystring: PageQuery, response: { 200: ref(MailKeyList), ...errorResponses(...ADMIN_ERRORS, 400) } },
  }, async (request) => {
    await organizationOf(request.params.organizationId);
    return keys.list(request.params.organizationId, request.query.limit, request.query.cursor);
  });

  app.delete('/organizations/:organizationId/keys/:keyId', {
    schema: {
      tags, security, operationId: 'revokeMailApiKey', summary: 'Revoke a mail API key', description: 'Takes effect on the next request.',
      params: Type.Object({ organizationId: Type.String(), keyId: Type.String() }),
      response: { 200: ref(MailKeySchema), ...errorResponses(...ADMIN_ERRORS) },
    },
  }, async (request) => {
    await organizationOf(request.params.organizationId);
    const info = isUuid(request.params.keyId) ? await keys.revoke(request.params.organizationId, request.params.keyId) : undefined;
    if (!info) throw notFound('API key');
    return info;
  });

  app.post('/domains/:id/verify', {
    schema: {
      tags: ['domains'], security, operationId: 'markDomainVerified', summary: 'Mark a sending domain verified without a DNS check',
      description: 'For tests and offline installs, where the DNS records cannot be published.',
      params: Type.Object({ id: Type.String() }),
      response: { 200: ref(DomainSchema), ...errorResponses(...ADMIN_ERRORS) },
    },
  }, async (request) => {
    const row = isUuid(request.params.id) ? await domains.getAny(request.params.id) : undefined;
    if (!row) throw notFound('domain');
    return toDomain((await domains.setStatus(row.id, 'verified'))!);
  });
}
