// JSON shapes of a workspace's own key routes (/api/v1/keys).
import { Type } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { Name } from '../../platform/http/schema-types.ts';
import { Scopes } from '../auth/scopes.ts';

export const WorkspaceKey = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key, to tell keys apart; not enough to use it.' }),
    scopes: Type.Array(Type.String(), { description: 'What the key may do.' }),
    createdAt: Type.String({ format: 'date-time' }),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'At minute precision.' }),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'WorkspaceKey', title: 'WorkspaceKey', description: 'An API key of the workspace, without its secret.' },
);

export const IssuedWorkspaceKey = Type.Intersect(
  [ref(WorkspaceKey), Type.Object({ key: Type.String({ description: 'The secret key (lk_live_…), shown only in this response.' }) })],
  { $id: 'IssuedWorkspaceKey', title: 'IssuedWorkspaceKey' },
);

export const WorkspaceKeyList = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(ref(WorkspaceKey)),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  { $id: 'WorkspaceKeyList', title: 'WorkspaceKeyList' },
);

export const CreateWorkspaceKeyBody = Type.Object(
  {
    name: Name(120),
    scopes: Type.Optional({ ...Scopes, description: 'Scopes of the new key: only scopes the calling key holds itself (else 403 insufficient_scope). Default: every scope of the calling key.' }),
  },
  { $id: 'CreateWorkspaceKey', title: 'CreateWorkspaceKey', additionalProperties: false },
);

export const ListWorkspaceKeysQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page (1 to 100, default 20).' })),
    cursor: Type.Optional(Type.String({ maxLength: 500, description: 'nextCursor of the previous page.' })),
  },
  { additionalProperties: false },
);

export const WORKSPACE_KEY_COMPONENTS = [WorkspaceKey, IssuedWorkspaceKey, WorkspaceKeyList, CreateWorkspaceKeyBody];
