// The link product's operator endpoints under /admin/v1: create workspaces,
// change plans, issue, list and revoke API keys. The platform's API shell
// guards them with ADMIN_TOKEN (src/platform/http/api-shell.ts).
import { Type } from '@sinclair/typebox';
import { Name, StringEnum } from '../../platform/http/schema-types.ts';
import { notFound } from '../../platform/http/errors.ts';
import { errorResponses } from '../../platform/http/openapi.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { App } from '../../platform/http/server.ts';
import type { ApiKeys } from '../workspaces/api-keys.ts';
import { PLANS } from '../workspaces/plans.ts';
import type { Workspaces } from '../workspaces/workspaces.ts';

const PlanSchema = StringEnum(PLANS);
const Workspace = Type.Object({ id: Type.String(), name: Type.String(), plan: PlanSchema, createdAt: Type.String(), updatedAt: Type.String() }, { title: 'Workspace' });
const KeyInfo = Type.Object(
  { id: Type.String(), workspaceId: Type.String(), name: Type.String(), prefix: Type.String(), createdAt: Type.String(), lastUsedAt: Type.Union([Type.String(), Type.Null()]), revokedAt: Type.Union([Type.String(), Type.Null()]) },
  { title: 'ApiKey' },
);
const WsParams = Type.Object({ workspaceId: Type.String() });

export async function adminRoutes(app: App, deps: { workspaces: Workspaces; keys: ApiKeys }): Promise<void> {
  const { workspaces, keys } = deps;
  const tags = ['workspaces'];
  const security = [{ adminToken: [] }];

  const workspaceOf = async (id: string) => {
    const ws = isUuid(id) ? await workspaces.get(id) : undefined;
    if (!ws) throw notFound('workspace');
    return ws;
  };

  app.post('/workspaces', {
    schema: {
      tags, security, summary: 'Create a workspace',
      body: Type.Object({ name: Name(120), plan: PlanSchema }, { additionalProperties: false }),
      response: { 201: Workspace, ...errorResponses(400, 401) },
    },
  }, async (request, reply) => reply.status(201).send(await workspaces.create(request.body.name, request.body.plan)));

  app.get('/workspaces', {
    schema: { tags, security, summary: 'List workspaces', response: { 200: Type.Object({ object: Type.Literal('list'), data: Type.Array(Workspace) }), ...errorResponses(401) } },
  }, async () => ({ object: 'list' as const, data: await workspaces.list() }));

  app.patch('/workspaces/:workspaceId', {
    schema: {
      tags, security, summary: 'Change the plan of a workspace', params: WsParams,
      body: Type.Object({ plan: PlanSchema }, { additionalProperties: false }),
      response: { 200: Workspace, ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    await workspaceOf(request.params.workspaceId);
    return (await workspaces.setPlan(request.params.workspaceId, request.body.plan))!;
  });

  app.post('/workspaces/:workspaceId/keys', {
    schema: {
      tags, security, summary: 'Issue an API key', description: 'The `key` is returned only in this response; it is stored as a SHA-256 hash.',
      params: WsParams,
      body: Type.Object({ name: Name(120) }, { additionalProperties: false }),
      response: { 201: Type.Object({ key: Type.String({ description: 'The secret key, shown once.' }), apiKey: KeyInfo }), ...errorResponses(400, 401, 404) },
    },
  }, async (request, reply) => {
    await workspaceOf(request.params.workspaceId);
    const { key, info } = await keys.create(request.params.workspaceId, request.body.name);
    return reply.status(201).send({ key, apiKey: info });
  });

  app.get('/workspaces/:workspaceId/keys', {
    schema: { tags, security, summary: 'List API keys (without secrets)', params: WsParams, response: { 200: Type.Object({ object: Type.Literal('list'), data: Type.Array(KeyInfo) }), ...errorResponses(401, 404) } },
  }, async (request) => {
    await workspaceOf(request.params.workspaceId);
    return { object: 'list' as const, data: await keys.list(request.params.workspaceId) };
  });

  app.delete('/workspaces/:workspaceId/keys/:keyId', {
    schema: {
      tags, security, summary: 'Revoke an API key', description: 'Takes effect on the next request.',
      params: Type.Object({ workspaceId: Type.String(), keyId: Type.String() }),
      response: { 200: KeyInfo, ...errorResponses(401, 404) },
    },
  }, async (request) => {
    await workspaceOf(request.params.workspaceId);
    const info = isUuid(request.params.keyId) ? await keys.revoke(request.params.workspaceId, request.params.keyId) : undefined;
    if (!info) throw notFound('API key');
    return info;
  });
}
