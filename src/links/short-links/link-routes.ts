// REST routes of links: create, get, update, soft-delete, list, bulk.
import { Type } from '@sinclair/typebox';
import { notFound } from '../../platform/http/errors.ts';
import { addComponents, ref } from '../../platform/http/components.ts';
import { API_BODY_ERRORS, API_ERRORS, documentOnly, errorResponses, withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import type { LinkChangelog } from '../changelog/link-changelog.ts';
import { runBulk } from './bulk.ts';
import { closeReachedLimits, createLink, listLinks } from './link-operations.ts';
import { orRefused } from './link-refusals.ts';
import { BulkBody, BulkLinksRequest, BulkResult, CreateLinkBody, Link, LINK_COMPONENTS, LinkList, ListLinksQuery, UpdateLinkBody } from './link-schemas.ts';
import { toLink, type LinkStore } from './link-store.ts';

export interface LinkRoutesDeps {
  store: LinkStore;
  changelog: LinkChangelog;
  baseUrl: string;
  /** Called for links whose scan limit was set, changed or removed. */
  onScanLimitChanged: (linkId: string) => Promise<void>;
}

const IdParams = Type.Object({ id: Type.String({ description: 'Link UUID, in any case.' }) });

export async function linkRoutes(app: App, deps: LinkRoutesDeps): Promise<void> {
  const { store, changelog, baseUrl, onScanLimitChanged } = deps;
  const tags = ['links'];
  addComponents(app, LINK_COMPONENTS);

  app.post('/links', {
    schema: {
      tags, operationId: 'createLink', summary: 'Create a link', body: ref(CreateLinkBody),
      response: { 201: withRateLimitHeaders(Link, 'The new link.'), ...errorResponses(...API_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => reply.status(201).send(await createLink({ store, changelog, baseUrl }, request.linksAuth.workspaceId, request.body)));

  app.get('/links', {
    schema: {
      tags, operationId: 'listLinks', summary: 'List links', description: 'Newest first by default; search, tag and campaign filters; keyset pagination, up to 100 per page.',
      querystring: ListLinksQuery,
      response: { 200: withRateLimitHeaders(LinkList, 'A page of links.'), ...errorResponses(...API_ERRORS) },
    },
  }, async (request) => listLinks(store, baseUrl, request.linksAuth.workspaceId, request.query));

  app.get('/links/:id', {
    schema: { tags, operationId: 'getLink', summary: 'Get a link', params: IdParams, response: { 200: withRateLimitHeaders(Link, 'The link.'), ...errorResponses(...API_ERRORS, 404) } },
  }, async (request) => {
    const row = await store.get(request.linksAuth.workspaceId, request.params.id);
    if (!row) throw notFound('link');
    return toLink(row, baseUrl);
  });

  app.patch('/links/:id', {
    schema: {
      tags, operationId: 'updateLink', summary: 'Update a link',
      description: 'Change destination, tags, pixels, expiry, scan limit, active state, campaign or device URLs. ' +
        'A scan limit counts the link\'s scans over its whole life, so setting one counts them first; while they cannot be counted the change is refused with 503 `scan_count_unavailable` (see Retry-After) and nothing is changed.',
      params: IdParams, body: ref(UpdateLinkBody),
      response: { 200: withRateLimitHeaders(Link, 'The updated link.'), ...errorResponses(...API_BODY_ERRORS, 404, 503) },
    },
  }, async (request) => {
    const { workspaceId } = request.linksAuth;
    const { row, scanLimitChanged } = orRefused(await store.update(workspaceId, request.params.id, request.body));
    if (scanLimitChanged) await onScanLimitChanged(row.id);
    await changelog.publishSoon([row.id]);
    const closed = scanLimitChanged && row.scan_limit !== null ? await closeReachedLimits(deps, workspaceId, [row.id]) : undefined;
    return toLink(closed?.get(row.id) ?? row, baseUrl);
  });

  app.delete('/links/:id', {
    schema: {
      tags, operationId: 'deleteLink', summary: 'Soft-delete a link', description: 'Sets isActive to false; the record is kept and can be reactivated with PATCH.',
      params: IdParams, response: { 200: withRateLimitHeaders(Link, 'The deactivated link.'), ...errorResponses(...API_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await store.softDelete(request.linksAuth.workspaceId, request.params.id);
    if (!row) throw notFound('link');
    await changelog.publishSoon([row.id]);
    return toLink(row, baseUrl);
  });

  app.post('/links/bulk', {
    schema: {
      tags, operationId: 'bulkLinks', summary: 'Create, update or soft-delete up to 100 links',
      description: 'Each operation is validated and applied on its own (`{action:"create", link}`, `{action:"update", id, changes}`, `{action:"delete", id}`); the result lists each one with its status.',
      body: BulkBody,
      response: { 200: withRateLimitHeaders(BulkResult, 'One result per operation, in order.'), ...errorResponses(...API_BODY_ERRORS) },
    },
    // Validated loosely (each operation is checked on its own), documented precisely.
    config: documentOnly({ body: ref(BulkLinksRequest) }),
  }, async (request) => {
    const { workspaceId } = request.linksAuth;
    const { result, scanLimitChanges } = await runBulk(store, workspaceId, request.body.operations, baseUrl);
    const changed = result.results.flatMap((r) => (r.link ? [r.link.id] : []));
    for (const { linkId } of scanLimitChanges) await onScanLimitChanged(linkId);
    await changelog.publishSoon(changed, 5000);
    const closed = await closeReachedLimits(deps, workspaceId, scanLimitChanges.flatMap((c) => (c.scanLimit === null ? [] : [c.linkId])));
    for (const item of result.results) {
      const now = item.link && closed.get(item.link.id);
      if (now) item.link = toLink(now, baseUrl);
    }
    return result;
  });
}
