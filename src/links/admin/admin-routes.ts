// The link product's operator endpoints under /admin/v1: create workspaces,
// change plans, issue, list and revoke API keys. The platform's API shell
// guards them with ADMIN_TOKEN (src/platform/http/api-shell.ts).
import { Type } from '@sinclair/typebox';
import { Name, StringEnum } from '../../platform/http/schema-types.ts';
import { notFound } from '../../platform/http/errors.ts';
import { addComponents, ref } from '../../platform/http/components.ts';
import { errorResponses } from '../../platform/http/openapi.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { App } from '../../platform/http/server.ts';
import type { ApiKeys } from '../workspaces/api-keys.ts';
import { PLANS } from '../workspaces/plans.ts';
import type { Workspaces } from '../workspaces/workspaces.ts';

const PlanSchema = StringEnum(PLANS);
const Workspace = Type.Object({ id: Type.String(), name: Type.String(), plan: PlanSchema, createdAt: Type.String(), updatedAt: Type.String() }, { $id: 'Workspace', title: 'Workspace' });
const KeyInfo = Type.Object(
  { id: Type.String(), workspaceId: Type.String(), name: Type.String(), prefix: Type.String(), createdAt: Type.String(), lastUsedAt: Type.Union([Type.String(), Type.Null()]), revokedAt: Type.Union([Type.String(), Type.Null()]), scopes: Type.Array(Type.String(), { description: 'What the key may do; keys issued here hold every scope.' }) },
  { $id: 'ApiKey', title: 'ApiKey' },
);
const NextCursor = Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' });
const WorkspaceList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ref(Workspace)), nextCursor: NextCursor }, { $id: 'WorkspaceList', title: 'WorkspaceList' });
const ApiKeyList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ref(KeyInfo)), nextCursor: NextCursor }, { $id: 'ApiKeyList', title: 'ApiKeyList' });
/** Pages as the link API's lists: newest first, `limit` 1 to 100 (default 20), `cursor` the previous page's nextCursor. */
const PageQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page (1 to 100, default 20).' })),
    cursor: Type.Optional(Type.String({ maxLength: 500, description: 'nextCursor of the previous page.' })),
  },
  { additionalProperties: false },
);
const IssuedApiKey = Type.Object({ key: Type.String({ description: 'The secret key, shown once.' }), apiKey: ref(KeyInfo) }, { $id: 'IssuedApiKey', title: 'IssuedApiKey' });
// Every admin route: 401 for a wrong token, 429 past the failed-attempt allowance, 404 when no ADMIN_TOKEN is configured.
const ADMIN_ERRORS = [401, 404, 429] as const;
const ADMIN_BODY_ERRORS = [...ADMIN_ERRORS, 400, 413, 415] as const;
const WsParams = Type.Object({ workspaceId: Type.String() });

export async function adminRoutes(app: App, deps: { workspaces: Workspaces; keys: ApiKeys }): Promise<void> {
  const { workspaces, keys } = deps;
  const tags = ['workspaces'];
  const security = [{ adminToken: [] }];
  addComponents(app, [Workspace, KeyInfo, WorkspaceList, ApiKeyList, IssuedApiKey]);

  const workspaceOf = async (id: string) => {
    const ws = isUuid(id) ? await workspaces.get(id) : undefined;
    if (!ws) throw notFound('workspace');
    return ws;
  };

  app.post('/workspaces', {
    schema: {
      tags, security, operationId: 'createWorkspace', summary: 'Create a workspace',
      body: Type.Object({ name: Name(120), plan: PlanSchema }, { additionalProperties: false }),
      response: { 201: ref(Workspace), ...errorResponses(...ADMIN_BODY_ERRORS) },
    },
  }, async (request, reply) => reply.status(201).send(await workspaces.create(request.body.name, request.body.plan)));

  app.get('/workspaces', {
    schema: { tags, security, operationId: 'listWorkspaces', summary: 'List workspaces', description: 'Newest first.', querystring: PageQuery, response: { 200: ref(WorkspaceList), ...errorResponses(...ADMIN_ERRORS, 400) } },
  }, async (request) => ({ object: 'list' as const, ...(await workspaces.list(request.query.limit ?? 20, request.query.cursor)) }));

  app.patch('/workspaces/:workspaceId', {
    schema: {
      tags, security, operationId: 'updateWorkspacePlan', summary: 'Change the plan of a workspace', params: WsParams,
      body: Type.Object({ plan: PlanSchema }, { additionalProperties: false }),
      response: { 200: ref(Workspace), ...errorResponses(...ADMIN_BODY_ERRORS) },
    },
  }, async (request) => {
    await workspaceOf(request.params.workspaceId);
    return (await workspaces.setPlan(request.params.workspaceId, request.body.plan))!;
  });

  app.post('/workspaces/:workspaceId/keys', {
    schema: {
      tags, security, operationId: 'createApiKey', summary: 'Issue an API key', description: 'The `key` is returned only in this response; it is stored as a SHA-256 hash.',
      params: WsParams,
      body: Type.Object({ name: Name(120) }, { additionalProperties: false }),
      response: { 201: ref(IssuedApiKey), ...errorResponses(...ADMIN_BODY_ERRORS) },
    },
  }, async (request, reply) => {
    await workspaceOf(request.params.workspaceId);
    const { key, info } = await keys.create(request.params.workspaceId, request.body.name);
    return reply.status(201).send({ key, apiKey: info });
  });

  app.get('/workspaces/:workspaceId/keys', {
    schema: { tags, security, operationId: 'listApiKeys', summary: 'List API keys (without secrets)', description: 'Newest first.', params: WsParams, querystring: PageQuery, response: { 200: ref(ApiKeyList), ...errorResponses(...ADMIN_ERRORS, 400) } },
  }, async (request) => {
    await workspaceOf(request.params.workspaceId);
    return { object: 'list' as const, ...(await keys.list(request.params.workspaceId, request.query.limit ?? 20, request.query.cursor)) };
  });

  app.delete('/workspaces/:workspaceId/keys/:keyId', {
    schema: {
      tags, security, operationId: 'revokeApiKey', summary: 'Revoke an API key', description: 'Takes effect on the next request.',
      params: Type.Object({ workspaceId: Type.String(), keyId: Type.String() }),
      response: { 200: ref(KeyInfo), ...errorResponses(...ADMIN_ERRORS) },
    },
  }, async (request) => {
    await workspaceOf(request.params.workspaceId);
    const info = isUuid(request.params.keyId) ? await keys.revoke(request.params.workspaceId, request.params.keyId) : undefined;
    if (!info) throw notFound('API key');
    return info;
  });
}
