// Erasure of scans, and a workspace's scan retention, over the API:
// POST /api/v1/privacy/erasures {clickId} (a visitor's scans), DELETE
// /api/v1/links/:id/scans (a link's), both 202: recorded here, applied by the
// privacy runner (scan-privacy.ts) within its interval; GET and PATCH
// /api/v1/workspace (scanRetentionDays).
import { Type, type TSchema } from '@sinclair/typebox';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { addComponents, ref } from '../../platform/http/components.ts';
import { API_BODY_ERRORS, API_ERRORS, errorResponses, withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { isUuid } from '../../platform/http/validation.ts';
import { CLICK_ID_FORMAT, type ClickIds } from '../scans/click-id.ts';
import type { LinkStore } from '../short-links/link-store.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ScanErasure = Type.Object(
  {
    object: Type.Literal('scan_erasure'),
    id: Type.String({ format: 'uuid' }),
    kind: StringEnum(['visitor', 'link'] as const, { description: 'visitor: every scan of the visitor of a click ID in the workspace (and their conversions\' link to those scans); link: every scan of a link.' }),
    scanId: Nullable(Type.String({ description: 'visitor: the scan of the click ID asked for (its visitor is erased).' })),
    linkId: Nullable(Type.String({ format: 'uuid', description: 'link: the link whose scans are erased.' })),
    status: StringEnum(['pending', 'done', 'not_found', 'failed'] as const, {
      description: 'pending: to be applied by the privacy runner (within a minute, or retried after a failure); done: applied; not_found: the click ID\'s scan never arrived, nothing was erased (erase again once it is stored); failed: its attempts were used up (see error), ask again.',
    }),
    requestedAt: Type.String({ format: 'date-time' }),
    finishedAt: Nullable(Type.String({ format: 'date-time', description: 'When it became done, not_found or failed.' })),
    attempts: Type.Integer({ description: 'Failed attempts so far.' }),
    error: Nullable(Type.String({ description: 'The last failed attempt\'s error.' })),
    scans: Nullable(Type.Integer({ description: 'Scans found to erase, once known.' })),
    conversions: Nullable(Type.Integer({ description: 'Conversions unlinked from the erased scans (scan, click and external IDs emptied), once done.' })),
    webhookDeliveries: Nullable(Type.Integer({ description: 'Stored webhook bodies (scan.created, conversion.created) whose personal fields were blanked, once done.' })),
  },
  { $id: 'ScanErasure', title: 'ScanErasure' },
);

const CreateErasureBody = Type.Object(
  { clickId: Type.String({ minLength: 1, maxLength: 200, description: 'The `svc_cid` value of one of the visitor\'s scans.' }) },
  { $id: 'CreateScanErasure', title: 'CreateScanErasure', additionalProperties: false },
);

export const WorkspaceSettings = Type.Object(
  {
    object: Type.Literal('workspace'),
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    plan: Type.String(),
    scanRetentionDays: Type.Union([Type.Integer({ minimum: 1, maximum: 3650 }), Type.Null()], { description: 'Scans older than this many days (from UTC midnight) are dropped once a day, rollups included; null keeps them forever.' }),
  },
  { $id: 'WorkspaceSettings', title: 'WorkspaceSettings' },
);

const UpdateWorkspaceBody = Type.Object(
  { scanRetentionDays: Type.Union([Type.Integer({ minimum: 1, maximum: 3650 }), Type.Null()], { description: '1–3650 days, or null for forever.' }) },
  { $id: 'UpdateWorkspace', title: 'UpdateWorkspace', additionalProperties: false, examples: [{ scanRetentionDays: 395 }] },
);

interface ErasureRow {
  id: string; kind: 'visitor' | 'link'; scan_id: string | null; link_id: string | null; status: 'pending' | 'done' | 'not_found' | 'failed';
  requested_at: Date; done_at: Date | null; attempts: number; last_error: string | null; scans: string | null; conversions: number | null; deliveries: number | null;
}
const ERASURE_COLUMNS = 'id, kind, scan_id, link_id, status, requested_at, done_at, attempts, last_error, scans, conversions, deliveries';
const present = (r: ErasureRow) => ({
  object: 'scan_erasure' as const, id: r.id, kind: r.kind, scanId: r.scan_id, linkId: r.link_id, status: r.status,
  requestedAt: r.requested_at.toISOString(), finishedAt: r.done_at?.toISOString() ?? null, attempts: r.attempts, error: r.last_error,
  scans: r.scans === null ? null : Number(r.scans), conversions: r.conversions, webhookDeliveries: r.deliveries,
});

interface WorkspaceRow { id: string; name: string; plan: string; scan_retention_days: number | null }
const presentWorkspace = (r: WorkspaceRow) => ({ object: 'workspace' as const, id: r.id, name: r.name, plan: r.plan, scanRetentionDays: r.scan_retention_days });

export async function privacyRoutes(app: App, deps: { pg: Pool; clickIds: ClickIds; links: LinkStore }): Promise<void> {
  addComponents(app, [ScanErasure, CreateErasureBody, WorkspaceSettings, UpdateWorkspaceBody]);
  const tags = ['privacy'];

  app.post('/privacy/erasures', {
    schema: {
      tags, operationId: 'eraseVisitorScans', summary: 'Erase a visitor\'s scans',
      description: 'Every scan of the visitor who made the scan of this click ID (the same daily visitor hash, in this workspace) is erased, from analytics, rollups, exports and the funnel, within a minute; their conversions stay but no longer name their scans. 400 click_id_malformed, 404 click_id_unknown (not issued by this service), 403 click_id_other_workspace.',
      body: ref(CreateErasureBody),
      response: { 202: withRateLimitHeaders(ScanErasure, 'The erasure, to be applied.'), ...errorResponses(...API_BODY_ERRORS, 403, 404) },
    },
  }, async (request, reply) => {
    const { clickId } = request.body;
    if (!CLICK_ID_FORMAT.test(clickId)) throw new ApiError(400, 'click_id_malformed', 'clickId is not a click ID: it is the 84-character svc_cid value added to the destination URL.', [{ path: '/clickId', message: 'not a click ID' }]);
    const claims = deps.clickIds.verify(clickId);
    if (!claims) throw new ApiError(404, 'click_id_unknown', 'This click ID was not issued by this service (its signature does not verify).');
    if (claims.workspaceId.toLowerCase() !== request.linksAuth.workspaceId) throw new ApiError(403, 'click_id_other_workspace', 'This click ID belongs to another workspace.');
    const { rows: [row] } = await deps.pg.query<ErasureRow>(
      `INSERT INTO scan_erasures (workspace_id, kind, scan_id) VALUES ($1, 'visitor', $2) RETURNING ${ERASURE_COLUMNS}`,
      [request.linksAuth.workspaceId, claims.scanId.toLowerCase()],
    );
    return reply.status(202).send(present(row!));
  });

  app.get('/privacy/erasures/:id', {
    schema: {
      tags, operationId: 'getScanErasure', summary: 'An erasure and its outcome',
      description: 'pending, done, not_found (the click ID\'s scan never arrived: nothing was erased) or failed, with what was asked, when it finished and what it covered. 404 for an erasure of another workspace.',
      params: Type.Object({ id: Type.String({ description: 'Erasure UUID, in any case.' }) }),
      response: { 200: withRateLimitHeaders(ScanErasure, 'The erasure.'), ...errorResponses(...API_ERRORS, 404) },
    },
  }, async (request) => {
    const { id } = request.params;
    if (!isUuid(id)) throw notFound('erasure');
    const { rows: [row] } = await deps.pg.query<ErasureRow>(`SELECT ${ERASURE_COLUMNS} FROM scan_erasures WHERE id = $1 AND workspace_id = $2`, [id, request.linksAuth.workspaceId]);
    if (!row) throw notFound('erasure');
    return present(row);
  });

  app.delete('/links/:id/scans', {
    schema: {
      tags, operationId: 'eraseLinkScans', summary: 'Erase a link\'s scans',
      description: 'Every scan of the link recorded so far is erased, from analytics, rollups, exports and the funnel, within a minute; the link stays. 404 for a link the workspace does not have.',
      params: Type.Object({ id: Type.String({ description: 'Link UUID, in any case.' }) }),
      response: { 202: withRateLimitHeaders(ScanErasure, 'The erasure, to be applied.'), ...errorResponses(...API_ERRORS, 404) },
    },
  }, async (request, reply) => {
    const link = await deps.links.get(request.linksAuth.workspaceId, request.params.id);
    if (!link) throw notFound('link');
    const { rows: [row] } = await deps.pg.query<ErasureRow>(
      `INSERT INTO scan_erasures (workspace_id, kind, link_id) VALUES ($1, 'link', $2) RETURNING ${ERASURE_COLUMNS}`,
      [request.linksAuth.workspaceId, link.id],
    );
    return reply.status(202).send(present(row!));
  });

  app.get('/workspace', {
    schema: {
      tags, operationId: 'getWorkspace', summary: 'The key\'s workspace and its scan retention',
      response: { 200: withRateLimitHeaders(WorkspaceSettings, 'The workspace.'), ...errorResponses(...API_ERRORS) },
    },
  }, async (request) => {
    const { rows: [row] } = await deps.pg.query<WorkspaceRow>('SELECT id, name, plan, scan_retention_days FROM workspaces WHERE id = $1', [request.linksAuth.workspaceId]);
    return presentWorkspace(row!);
  });

  app.patch('/workspace', {
    schema: {
      tags, operationId: 'updateWorkspace', summary: 'Set how long the workspace keeps its scans',
      description: '`scanRetentionDays` 1–3650, or null for forever. Scans from before UTC midnight that many days ago are dropped by the daily retention pass (rollups included).',
      body: ref(UpdateWorkspaceBody),
      response: { 200: withRateLimitHeaders(WorkspaceSettings, 'The workspace.'), ...errorResponses(...API_BODY_ERRORS) },
    },
  }, async (request) => {
    const { rows: [row] } = await deps.pg.query<WorkspaceRow>(
      `UPDATE workspaces SET scan_retention_days = $2, updated_at = CASE WHEN scan_retention_days IS DISTINCT FROM $2 THEN now() ELSE updated_at END
        WHERE id = $1 RETURNING id, name, plan, scan_retention_days`,
      [request.linksAuth.workspaceId, request.body.scanRetentionDays],
    );
    return presentWorkspace(row!);
  });
}
