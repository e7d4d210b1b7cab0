// Resend's /segments at the root: member lists (segment-members.ts), stored with
// the same segments as /api/v1/segments. A segment made here has a filter that
// matches no contact, so it holds exactly the contacts added to it; a filter
// segment of /api/v1 is listed here too, and its contacts are its members and
// the contacts its filter matches (segments.ts).
import { Type } from '@sinclair/typebox';
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { Name } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { IdParams, Timestamp } from '../http/mail-schemas.ts';
import { RESEND_BODY_ERRORS, RESEND_ERRORS, resendErrorResponses } from '../resend/resend-errors.ts';
import { resendPage, ResendListOf, ResendPageQuery } from '../resend/resend-pages.ts';
import type { ContactRow } from './contacts.ts';
import { ResendContactList, toResendContactItem } from './resend-contact-shape.ts';
import { parseSegmentFilter } from './segment-filter.ts';
import { contactsOfSegmentQuery, MEMBERS_ONLY, Segments, type SegmentRow } from './segments.ts';

const ResendSegment = Type.Object({ object: Type.Literal('segment'), id: Type.String(), name: Type.String(), created_at: Timestamp() }, { $id: 'ResendSegment', title: 'ResendSegment' });
const ResendSegmentList = ResendListOf(ref(ResendSegment), 'ResendSegmentList');
const ResendSegmentCreated = Type.Object({ object: Type.Literal('segment'), id: Type.String(), name: Type.String() }, { $id: 'ResendSegmentCreated', title: 'ResendSegmentCreated' });
const ResendSegmentRef = Type.Object({ object: Type.Literal('segment'), id: Type.String() }, { $id: 'ResendSegmentRef', title: 'ResendSegmentRef' });
const ResendSegmentRemoved = Type.Object({ object: Type.Literal('segment'), id: Type.String(), deleted: Type.Literal(true) }, { $id: 'ResendSegmentRemoved', title: 'ResendSegmentRemoved' });

export const toResendSegment = (r: SegmentRow) => ({ object: 'segment' as const, id: r.id, name: r.name, created_at: r.created_at.toISOString() });

/** Resend's schemas of segments, for the routes of a contact's segments. */
export const RESEND_SEGMENT_SCHEMAS = { ResendSegment, ResendSegmentList };

export async function resendSegmentRoutes(app: App, deps: { pg: Pool }): Promise<void> {
  const { pg } = deps;
  const segments = new Segments(pg);
  const tags = ['resend-segments'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [ResendSegment, ResendSegmentList, ResendSegmentCreated, ResendSegmentRef, ResendSegmentRemoved]);

  const segmentOf = async (organizationId: string, id: string) => {
    const row = await segments.get(organizationId, id);
    if (!row) throw notFound('segment');
    return row;
  };

  app.post('/segments', {
    config,
    schema: {
      tags, operationId: 'resendCreateSegment', summary: 'Create a segment: a list of contacts (Resend\'s segments.create)',
      body: Type.Object({ name: Name(120) }, { additionalProperties: false }),
      response: { 201: withRateLimitHeaders(ResendSegmentCreated, 'The new, empty segment.'), ...resendErrorResponses(...RESEND_BODY_ERRORS) },
    },
  }, async (request, reply) => {
    const row = await segments.create(request.mailAuth.organizationId, request.body.name, MEMBERS_ONLY);
    return reply.status(201).send({ object: 'segment' as const, id: row.id, name: row.name });
  });

  app.get('/segments', {
    config,
    schema: { tags, operationId: 'resendListSegments', summary: 'List segments', description: 'Filter segments of /api/v1 too.', querystring: ResendPageQuery, response: { 200: withRateLimitHeaders(ResendSegmentList, 'Newest first.'), ...resendErrorResponses(...RESEND_ERRORS, 400) } },
  }, async (request) => resendPage(pg, { select: 'SELECT * FROM mail_segments WHERE organization_id = $1', params: [request.mailAuth.organizationId] }, request.query, toResendSegment));

  app.get('/segments/:id', {
    config,
    schema: { tags, operationId: 'resendGetSegment', summary: 'Get a segment', params: IdParams, response: { 200: withRateLimitHeaders(ResendSegment, 'The segment.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => toResendSegment(await segmentOf(request.mailAuth.organizationId, request.params.id)));

  app.patch('/segments/:id', {
    config,
    schema: {
      tags, operationId: 'resendUpdateSegment', summary: 'Rename a segment', params: IdParams,
      body: Type.Object({ name: Name(120) }, { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(ResendSegmentRef, 'Renamed.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await segmentOf(request.mailAuth.organizationId, request.params.id);
    await segments.update(row.id, { name: request.body.name });
    return { object: 'segment' as const, id: row.id };
  });

  app.delete('/segments/:id', {
    config,
    schema: { tags, operationId: 'resendRemoveSegment', summary: 'Remove a segment', description: 'Its contacts stay.', params: IdParams, response: { 200: withRateLimitHeaders(ResendSegmentRemoved, 'Removed.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const row = await segmentOf(request.mailAuth.organizationId, request.params.id);
    await segments.delete(row.id);
    return { object: 'segment' as const, id: row.id, deleted: true as const };
  });

  app.get('/segments/:id/contacts', {
    config,
    schema: {
      tags, operationId: 'resendListSegmentContacts', summary: 'The contacts of a segment (Resend\'s contacts.list with segmentId)',
      description: 'Its members, and the contacts its filter matches now.',
      params: IdParams, querystring: ResendPageQuery,
      response: { 200: withRateLimitHeaders(ResendContactList, 'Newest first.'), ...resendErrorResponses(...RESEND_ERRORS, 400, 404, 422) },
    },
  }, async (request) => {
    const row = await segmentOf(request.mailAuth.organizationId, request.params.id);
    const parsed = parseSegmentFilter(row.filter);
    if (!parsed.ok) throw new ApiError(422, 'segment_filter_invalid', `The segment's filter is not valid; correct it with PATCH /api/v1/segments/${row.id}.`, parsed.errors.map((e) => ({ path: `/filter${e.path}`, message: e.message })));
    return resendPage<ContactRow, ReturnType<typeof toResendContactItem>>(pg, contactsOfSegmentQuery(row, parsed.filter), request.query, toResendContactItem);
  });
}
