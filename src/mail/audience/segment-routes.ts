// /api/v1/segments (FULL keys): named filters over the organization's contacts
// (segment-filter.ts), and the contacts a segment matches now; stored by segments.ts.
import { addComponents } from '../../platform/http/components.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { MAIL_BODY_ERRORS, MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import { IdParams } from '../http/mail-schemas.ts';
import { PageQuery } from '../http/pagination.ts';
import { toContact } from './contacts.ts';
import { parseSegmentFilter, type SegmentFilter } from './segment-filter.ts';
import { CreateSegmentBody, SegmentContacts, SegmentList, SegmentSchema, UpdateSegmentBody } from './segment-schemas.ts';
import { Segments, toSegment } from './segments.ts';

/** The filter, or 400 invalid_filter with every problem by its path in the body. */
function checkedFilter(filter: unknown): SegmentFilter {
  const parsed = parseSegmentFilter(filter);
  if (!parsed.ok) throw new ApiError(400, 'invalid_filter', `The filter is not valid: ${parsed.errors[0]!.path || '/'} ${parsed.errors[0]!.message}.`, parsed.errors.map((e) => ({ path: `/filter${e.path}`, message: e.message })));
  return parsed.filter;
}

export async function segmentRoutes(app: App, deps: { pg: Pool }): Promise<void> {
  const segments = new Segments(deps.pg);
  const tags = ['segments'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [SegmentSchema, SegmentList, SegmentContacts]);

  const segmentOf = async (organizationId: string, id: string) => {
    const segment = await segments.get(organizationId, id);
    if (!segment) throw notFound('segment');
    return segment;
  };

  app.post('/segments', {
    config,
    schema: {
      tags, operationId: 'createSegment', summary: 'Create a segment',
      body: CreateSegmentBody,
      response: { 201: withRateLimitHeaders(SegmentSchema, 'The new segment.'), ...mailErrorResponses(...MAIL_BODY_ERRORS) },
    },
  }, async (request, reply) => {
    const filter = checkedFilter(request.body.filter);
    return reply.status(201).send(toSegment(await segments.create(request.mailAuth.organizationId, request.body.name, filter)));
  });

  app.get('/segments', {
    config,
    schema: { tags, operationId: 'listSegments', summary: 'List segments', querystring: PageQuery, response: { 200: withRateLimitHeaders(SegmentList, 'A page of segments.'), ...mailErrorResponses(...MAIL_ERRORS, 400) } },
  }, async (request) => segments.list(request.mailAuth.organizationId, request.query, toSegment));

  app.get('/segments/:id', {
    config,
    schema: { tags, operationId: 'getSegment', summary: 'Get a segment', params: IdParams, response: { 200: withRateLimitHeaders(SegmentSchema, 'The segment.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => toSegment(await segmentOf(request.mailAuth.organizationId, request.params.id)));

  app.patch('/segments/:id', {
    config,
    schema: {
      tags, operationId: 'updateSegment', summary: 'Change a segment', params: IdParams,
      body: UpdateSegmentBody,
      response: { 200: withRateLimitHeaders(SegmentSchema, 'The segment.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await segmentOf(request.mailAuth.organizationId, request.params.id);
    const { name, filter } = request.body;
    return toSegment(await segments.update(row.id, { ...(name === undefined ? {} : { name }), ...(filter === undefined ? {} : { filter: checkedFilter(filter) }) }));
  });

  app.delete('/segments/:id', {
    config,
    schema: { tags, operationId: 'deleteSegment', summary: 'Delete a segment', params: IdParams, response: { 200: withRateLimitHeaders(SegmentSchema, 'The deleted segment.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const row = await segmentOf(request.mailAuth.organizationId, request.params.id);
    await segments.delete(row.id);
    return toSegment(row);
  });

  app.get('/segments/:id/contacts', {
    config,
    schema: { tags, operationId: 'listSegmentContacts', summary: 'The contacts a segment matches now', params: IdParams, querystring: PageQuery, response: { 200: withRateLimitHeaders(SegmentContacts, 'A page of matching contacts, newest first.'), ...mailErrorResponses(...MAIL_ERRORS, 400, 404, 422) } },
  }, async (request) => {
    const row = await segmentOf(request.mailAuth.organizationId, request.params.id);
    const found = await segments.contacts(row, request.query, toContact);
    if (found.ok) return found.page;
    // A filter stored before today's checks: say so, and where.
    const e = found.errors[0]!;
    throw new ApiError(422, 'segment_filter_invalid', `The segment's filter is not valid (${e.path || '/'}: ${e.message}); correct it with PATCH /api/v1/segments/${row.id}.`, found.errors.map((x) => ({ path: `/filter${x.path}`, message: x.message })));
  });
}
