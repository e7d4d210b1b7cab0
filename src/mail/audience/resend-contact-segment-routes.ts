// Resend's contacts.segments: the segments a contact was added to, and adding or
// removing it (segment-members.ts). The contact by id or email; the segment by id.
import { Type } from '@sinclair/typebox';
import { addComponents } from '../../platform/http/components.ts';
import { notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { RESEND_ERRORS, resendErrorResponses } from '../resend/resend-errors.ts';
import { resendPage, ResendPageQuery } from '../resend/resend-pages.ts';
import { contactOf } from './contact-operations.ts';
import type { Contacts } from './contacts.ts';
import { ContactParams } from './resend-contact-routes.ts';
import { RESEND_SEGMENT_SCHEMAS, toResendSegment } from './resend-segment-routes.ts';
import type { SegmentMembers } from './segment-members.ts';
import { Segments, type SegmentRow } from './segments.ts';

const MembershipParams = Type.Object({ contact: Type.String({ maxLength: 254, description: 'The contact\'s id or email address.' }), segmentId: Type.String({ maxLength: 100 }) });
const ResendContactSegment = Type.Object({ object: Type.Literal('contact_segment'), id: Type.String({ description: 'The segment.' }) }, { $id: 'ResendContactSegment', title: 'ResendContactSegment' });
const ResendContactSegmentRemoved = Type.Object(
  { object: Type.Literal('contact_segment'), id: Type.String({ description: 'The segment.' }), deleted: Type.Literal(true) },
  { $id: 'ResendContactSegmentRemoved', title: 'ResendContactSegmentRemoved' },
);

export async function resendContactSegmentRoutes(app: App, deps: { contacts: Contacts; segmentMembers: SegmentMembers; pg: Pool }): Promise<void> {
  const { contacts, segmentMembers, pg } = deps;
  const segments = new Segments(pg);
  const tags = ['resend-contacts'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [ResendContactSegment, ResendContactSegmentRemoved]);

  const membership = async (organizationId: string, params: { contact: string; segmentId: string }) => {
    const contact = await contactOf(contacts, organizationId, params.contact);
    const segment = await segments.get(organizationId, params.segmentId);
    if (!segment) throw notFound('segment');
    return { contact, segment };
  };

  app.get('/contacts/:contact/segments', {
    config,
    schema: {
      tags, operationId: 'resendListContactSegments', summary: 'The segments a contact was added to',
      description: 'Segments it is in by their filter alone (/api/v1 filter segments) are not listed.',
      params: ContactParams, querystring: ResendPageQuery,
      response: { 200: withRateLimitHeaders(RESEND_SEGMENT_SCHEMAS.ResendSegmentList, 'Newest segment first.'), ...resendErrorResponses(...RESEND_ERRORS, 400, 404) },
    },
  }, async (request) => {
    const contact = await contactOf(contacts, request.mailAuth.organizationId, request.params.contact);
    return resendPage<SegmentRow, ReturnType<typeof toResendSegment>>(pg, segmentMembers.segmentsOfQuery(contact.organization_id, contact.id), request.query, toResendSegment);
  });

  app.post('/contacts/:contact/segments/:segmentId', {
    config,
    schema: { tags, operationId: 'resendAddContactSegment', summary: 'Add a contact to a segment', params: MembershipParams, response: { 200: withRateLimitHeaders(ResendContactSegment, 'A member (adding a member again changes nothing).'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const { contact, segment } = await membership(request.mailAuth.organizationId, request.params);
    await segmentMembers.add(segment.id, contact.id);
    return { object: 'contact_segment' as const, id: segment.id };
  });

  app.delete('/contacts/:contact/segments/:segmentId', {
    config,
    schema: { tags, operationId: 'resendRemoveContactSegment', summary: 'Remove a contact from a segment', params: MembershipParams, response: { 200: withRateLimitHeaders(ResendContactSegmentRemoved, 'No longer a member.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const { contact, segment } = await membership(request.mailAuth.organizationId, request.params);
    if (!(await segmentMembers.remove(segment.id, contact.id))) throw notFound('segment membership');
    return { object: 'contact_segment' as const, id: segment.id, deleted: true as const };
  });
}
