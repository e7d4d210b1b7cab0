// A workspace's own API keys (/api/v1/keys), for a key holding keys:write: issue a
// key with some scopes, list the keys without secrets, revoke one. A key grants
// only scopes it holds itself, and revokes only keys whose scopes it holds, so
// keys:write never widens what a workspace's keys can do nor takes away a wider key. Keys are checked in Postgres on every request (api-keys.ts): a
// revocation holds on every ingress from its commit on.
import { Type } from '@sinclair/typebox';
import { notFound } from '../../platform/http/errors.ts';
import { addComponents, ref } from '../../platform/http/components.ts';
import { API_BODY_ERRORS, API_ERRORS, errorResponses, withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { App } from '../../platform/http/server.ts';
import { insufficientScope, type Scope } from '../auth/scopes.ts';
import type { ApiKeyInfo, ApiKeys } from './api-keys.ts';
import { CreateWorkspaceKeyBody, IssuedWorkspaceKey, ListWorkspaceKeysQuery, WORKSPACE_KEY_COMPONENTS, WorkspaceKey, WorkspaceKeyList } from './key-schemas.ts';

const IdParams = Type.Object({ id: Type.String({ description: 'Key id (UUID).' }) });

/** The key as the workspace sees it (its workspace is the caller's). */
const toWorkspaceKey = ({ workspaceId: _w, ...info }: ApiKeyInfo) => info;

export async function keyRoutes(app: App, keys: ApiKeys): Promise<void> {
  const tags = ['keys'];
  addComponents(app, WORKSPACE_KEY_COMPONENTS);

  app.post('/keys', {
    schema: {
      tags, operationId: 'createWorkspaceKey', summary: 'Issue an API key with scopes',
      description: 'Needs keys:write. The new key holds the given scopes, each of which the calling key must hold (else 403 insufficient_scope naming it). The secret `key` is in this response only.',
      body: ref(CreateWorkspaceKeyBody),
      response: { 201: withRateLimitHeaders(IssuedWorkspaceKey, 'The new key, with its secret.'), ...errorResponses(...API_BODY_ERRORS) },
    },
  }, async (request, reply) => {
    const { workspaceId, scopes: held } = request.linksAuth;
    const scopes: Scope[] = request.body.scopes ?? [...held];
    const missing = scopes.find((s) => !held.has(s));
    if (missing) throw insufficientScope(missing);
    const { key, info } = await keys.create(workspaceId, request.body.name, scopes);
    return reply.status(201).send({ ...toWorkspaceKey(info), key });
  });

  app.get('/keys', {
    schema: {
      tags, operationId: 'listWorkspaceKeys', summary: 'List the workspace\'s API keys (without secrets)', description: 'Needs keys:write. Newest first, revoked keys included.',
      querystring: ListWorkspaceKeysQuery,
      response: { 200: withRateLimitHeaders(WorkspaceKeyList, 'A page of keys.'), ...errorResponses(...API_ERRORS) },
    },
  }, async (request) => {
    const { data, nextCursor } = await keys.list(request.linksAuth.workspaceId, request.query.limit ?? 20, request.query.cursor);
    return { object: 'list' as const, data: data.map(toWorkspaceKey), nextCursor };
  });

  app.delete('/keys/:id', {
    schema: {
      tags, operationId: 'revokeWorkspaceKey', summary: 'Revoke an API key',
      description: 'Needs keys:write, and every scope the key to revoke holds (else 403 insufficient_scope naming the first it lacks; nothing changes). From the moment it answers, the key gets 401 invalid_api_key on every ingress (the calling key may revoke itself). Revoking a revoked key changes nothing.',
      params: IdParams,
      response: { 200: withRateLimitHeaders(WorkspaceKey, 'The revoked key.'), ...errorResponses(...API_ERRORS, 404) },
    },
  }, async (request) => {
    const { workspaceId, scopes: held } = request.linksAuth;
    const info = isUuid(request.params.id) ? await keys.revokeWithin(workspaceId, request.params.id, held) : undefined;
    if (!info) throw notFound('API key');
    if ('missing' in info) throw insufficientScope(info.missing, 'the key to revoke holds it');
    return toWorkspaceKey(info);
  });
}
