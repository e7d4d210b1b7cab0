// Resend's /api-keys at the root: an organization's keys, managed with one of its
// full keys (a sending key is refused with restricted_api_key, as by Resend).
// `permission` maps onto our kinds: full_access is a full key, sending_access a
// send key; `domain_id` restricts the key to that domain. A key restricted to
// some domains only makes keys restricted to them, and lists, renames and revokes
// only such keys: it cannot widen its own reach. A key with a rate limit passes it on.
import { Type } from '@sinclair/typebox';
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { Name, StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { visibleDomain } from '../domains/domain-operations.ts';
import type { Domains } from '../domains/domains.ts';
import { IdParams, NullableTimestamp, Timestamp } from '../http/mail-schemas.ts';
import { RESEND_BODY_ERRORS, RESEND_ERRORS, resendErrorResponses } from '../resend/resend-errors.ts';
import { resendPage, ResendListOf, ResendPageQuery } from '../resend/resend-pages.ts';
import { toMailKeyInfo, type MailKeyRow, type MailKeys } from './mail-keys.ts';

const PERMISSIONS = { full_access: 'full', sending_access: 'send' } as const;

const ResendApiKey = Type.Object(
  { id: Type.String(), name: Type.String(), created_at: Timestamp(), last_used_at: NullableTimestamp({ description: 'To the minute.' }) },
  { $id: 'ResendApiKey', title: 'ResendApiKey' },
);
const ResendApiKeyList = ResendListOf(ref(ResendApiKey), 'ResendApiKeyList');
const ResendApiKeyCreated = Type.Object({ id: Type.String(), token: Type.String({ description: 'The key, shown this once.' }) }, { $id: 'ResendApiKeyCreated', title: 'ResendApiKeyCreated' });
const ResendApiKeyRef = Type.Object({ object: Type.Literal('api_key'), id: Type.String() }, { $id: 'ResendApiKeyRef', title: 'ResendApiKeyRef' });
const ResendApiKeyRemoved = Type.Object({ object: Type.Literal('api_key'), id: Type.String(), deleted: Type.Literal(true) }, { $id: 'ResendApiKeyRemoved', title: 'ResendApiKeyRemoved' });

const toResendApiKey = (row: MailKeyRow) => {
  const info = toMailKeyInfo(row);
  return { id: info.id, name: info.name, created_at: info.created_at, last_used_at: info.last_used_at };
};

export async function resendApiKeyRoutes(app: App, deps: { keys: MailKeys; domains: Domains; pg: Pool }): Promise<void> {
  const { keys, domains, pg } = deps;
  const tags = ['resend-api-keys'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [ResendApiKey, ResendApiKeyList, ResendApiKeyCreated, ResendApiKeyRef, ResendApiKeyRemoved]);

  app.post('/api-keys', {
    config,
    schema: {
      tags, operationId: 'resendCreateApiKey', summary: 'Create an API key (Resend\'s apiKeys.create)',
      description: 'full_access: a full key; sending_access: a send key (sends, events, broadcasts, reads emails). domain_id restricts it to that domain; a domain-restricted key must name one of its domains.',
      body: Type.Object({
        name: Name(50),
        permission: Type.Optional(StringEnum(['full_access', 'sending_access'] as const, { default: 'full_access' })),
        domain_id: Type.Optional(Type.String({ maxLength: 100 })),
      }, { additionalProperties: false }),
      response: { 201: withRateLimitHeaders(ResendApiKeyCreated, 'The key, shown once.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404) },
    },
  }, async (request, reply) => {
    const grant = request.mailAuth;
    const { name, permission = 'full_access', domain_id: domainId } = request.body;
    const domain = domainId === undefined ? undefined : await visibleDomain(domains, grant, domainId);
    if (!domain && grant.domains !== null) {
      throw new ApiError(403, 'domain_not_allowed', 'This key is restricted to some domains: the keys it makes must be too; give domain_id.', [{ path: '/domain_id', message: 'required for a domain-restricted key' }]);
    }
    // A key it makes has its requests-per-second limit: a limited key cannot mint itself an unlimited one.
    const { key, info } = await keys.create(grant.organizationId, {
      name, kind: PERMISSIONS[permission], ...(domain ? { domains: [domain.name] } : {}), ...(grant.rateLimit !== null ? { rate_limit: grant.rateLimit } : {}),
    });
    return reply.status(201).send({ id: info.id, token: key });
  });

  app.get('/api-keys', {
    config,
    schema: { tags, operationId: 'resendListApiKeys', summary: 'List the organization\'s API keys in use', querystring: ResendPageQuery, response: { 200: withRateLimitHeaders(ResendApiKeyList, 'Newest first, without secrets.'), ...resendErrorResponses(...RESEND_ERRORS, 400) } },
  }, async (request) => resendPage(pg, keys.activeListQuery(request.mailAuth.organizationId, request.mailAuth.domains), request.query, toResendApiKey));

  app.patch('/api-keys/:id', {
    config,
    schema: {
      tags, operationId: 'resendUpdateApiKey', summary: 'Rename an API key', params: IdParams,
      body: Type.Object({ name: Name(50) }, { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(ResendApiKeyRef, 'Renamed.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const info = isUuid(request.params.id) ? await keys.rename(request.mailAuth.organizationId, request.params.id, request.body.name, request.mailAuth.domains) : undefined;
    if (!info) throw notFound('api key');
    return { object: 'api_key' as const, id: info.id };
  });

  app.delete('/api-keys/:id', {
    config,
    schema: { tags, operationId: 'resendRemoveApiKey', summary: 'Revoke an API key', description: 'Effective on its next request.', params: IdParams, response: { 200: withRateLimitHeaders(ResendApiKeyRemoved, 'Revoked.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const info = isUuid(request.params.id) ? await keys.revokeInUse(request.mailAuth.organizationId, request.params.id, request.mailAuth.domains) : undefined;
    if (!info) throw notFound('api key');
    return { object: 'api_key' as const, id: info.id, deleted: true as const };
  });
}
