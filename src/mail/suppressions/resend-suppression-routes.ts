// Resend's /suppressions at the root, over the same list as /api/v1/suppressions
// (suppression-operations.ts): add, get and remove by id or email, list (by
// `origin`, our reason), and add or remove up to 100 at once.
import { Type } from '@sinclair/typebox';
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { parseEmail } from '../http/email-address.ts';
import { Timestamp } from '../http/mail-schemas.ts';
import { RESEND_BODY_ERRORS, RESEND_ERRORS, resendErrorResponses } from '../resend/resend-errors.ts';
import { resendPage, ResendListOf, ResendPageQuery } from '../resend/resend-pages.ts';
import { addSuppression } from './suppression-operations.ts';
import { SUPPRESSION_REASONS, type SuppressionRow, type Suppressions } from './suppressions.ts';

const MAX_BATCH = 100;
const Email = Type.String({ maxLength: 254 });
const ResendSuppression = Type.Object(
  {
    object: Type.Literal('suppression'),
    id: Type.String(),
    email: Type.String(),
    origin: StringEnum(SUPPRESSION_REASONS, { description: 'Why it is listed (our reason): manual, bounce, complaint, or unsubscribe (added with that reason).' }),
    source_id: Type.Null({ description: 'Always null: the message that caused a bounce or complaint is in the mail events.' }),
    created_at: Timestamp(),
  },
  { $id: 'ResendSuppression', title: 'ResendSuppression' },
);
const ResendSuppressionList = ResendListOf(ref(ResendSuppression), 'ResendSuppressionList');
const ResendSuppressionRef = Type.Object({ object: Type.Literal('suppression'), id: Type.String() }, { $id: 'ResendSuppressionRef', title: 'ResendSuppressionRef' });
const ResendSuppressionRemoved = Type.Object({ object: Type.Literal('suppression'), id: Type.String(), deleted: Type.Literal(true) }, { $id: 'ResendSuppressionRemoved', title: 'ResendSuppressionRemoved' });
const ResendSuppressionsAdded = Type.Object({ data: Type.Array(ref(ResendSuppressionRef)) }, { $id: 'ResendSuppressionsAdded', title: 'ResendSuppressionsAdded' });
const ResendSuppressionsRemoved = Type.Object({ data: Type.Array(ref(ResendSuppressionRemoved)) }, { $id: 'ResendSuppressionsRemoved', title: 'ResendSuppressionsRemoved' });
const SuppressionParams = Type.Object({ id: Type.String({ maxLength: 254, description: 'The entry\'s id or its email address.' }) });

const toResendSuppression = (r: SuppressionRow) => ({ object: 'suppression' as const, id: r.id, email: r.email, origin: r.reason, source_id: null, created_at: r.created_at.toISOString() });

export async function resendSuppressionRoutes(app: App, deps: { suppressions: Suppressions; pg: Pool }): Promise<void> {
  const { suppressions, pg } = deps;
  const tags = ['resend-suppressions'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [ResendSuppression, ResendSuppressionList, ResendSuppressionRef, ResendSuppressionRemoved, ResendSuppressionsAdded, ResendSuppressionsRemoved]);

  /** The entry named by id or address, or undefined. */
  const entryOf = (organizationId: string, idOrEmail: string) =>
    idOrEmail.includes('@') || isUuid(idOrEmail) ? suppressions.find(organizationId, idOrEmail) : Promise.resolve(undefined);

  app.post('/suppressions', {
    config,
    schema: {
      tags, operationId: 'resendAddSuppression', summary: 'Add an address to the suppression list (origin manual)',
      description: 'An address already listed answers its entry (200); a new one 201.',
      body: Type.Object({ email: Email }, { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(ResendSuppressionRef, 'Already listed.'), 201: withRateLimitHeaders(ResendSuppressionRef, 'Added.'), ...resendErrorResponses(...RESEND_BODY_ERRORS) },
    },
  }, async (request, reply) => {
    const { suppression, created } = await addSuppression(suppressions, request.mailAuth.organizationId, { email: request.body.email });
    return reply.status(created ? 201 : 200).send({ object: 'suppression' as const, id: suppression.id });
  });

  app.get('/suppressions', {
    config,
    schema: {
      tags, operationId: 'resendListSuppressions', summary: 'List the suppression list',
      querystring: Type.Composite([ResendPageQuery, Type.Object({ origin: Type.Optional(StringEnum(SUPPRESSION_REASONS)) })], { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(ResendSuppressionList, 'Newest first.'), ...resendErrorResponses(...RESEND_ERRORS, 400) },
    },
  }, async (request) => {
    const { origin, ...paging } = request.query;
    return resendPage(pg, { select: 'SELECT * FROM mail_suppressions WHERE organization_id = $1 AND ($2::text IS NULL OR reason = $2)', params: [request.mailAuth.organizationId, origin ?? null] }, paging, toResendSuppression);
  });

  app.get('/suppressions/:id', {
    config,
    schema: { tags, operationId: 'resendGetSuppression', summary: 'Get an entry by id or email', params: SuppressionParams, response: { 200: withRateLimitHeaders(ResendSuppression, 'The entry.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const row = await entryOf(request.mailAuth.organizationId, request.params.id);
    if (!row) throw notFound('suppression');
    return toResendSuppression(row);
  });

  app.delete('/suppressions/:id', {
    config,
    schema: { tags, operationId: 'resendRemoveSuppression', summary: 'Remove an entry by id or email: mail goes to the address again', params: SuppressionParams, response: { 200: withRateLimitHeaders(ResendSuppressionRemoved, 'Removed.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const row = await entryOf(request.mailAuth.organizationId, request.params.id);
    const removed = row && (await suppressions.remove(row.organization_id, row.id));
    if (!removed) throw notFound('suppression');
    return { object: 'suppression' as const, id: removed.id, deleted: true as const };
  });

  app.post('/suppressions/batch/add', {
    config,
    schema: {
      tags, operationId: 'resendAddSuppressions', summary: 'Add up to 100 addresses',
      description: 'Every address is checked first: one that is not an address refuses the batch (400 invalid_email naming it) and nothing is added. Entries in the order given; listed ones keep their entry.',
      body: Type.Object({ emails: Type.Array(Email, { minItems: 1, maxItems: MAX_BATCH }) }, { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(ResendSuppressionsAdded, 'The entries.'), ...resendErrorResponses(...RESEND_BODY_ERRORS) },
    },
  }, async (request) => {
    const organizationId = request.mailAuth.organizationId;
    // Every address is checked before any is added, as addSuppression checks one; then all are added in one statement.
    const keys = request.body.emails.map((email, i) => checkAddress(email, i));
    const rows = await suppressions.addAll(organizationId, keys, 'manual');
    const idOf = new Map(rows.map((r) => [r.email, r.id]));
    return { data: keys.map((key) => ({ object: 'suppression' as const, id: idOf.get(key)! })) };
  });

  app.post('/suppressions/batch/remove', {
    config,
    schema: {
      tags, operationId: 'resendRemoveSuppressions', summary: 'Remove up to 100 entries by email or by id',
      description: 'The entries removed; addresses or ids not listed are left out of the answer.',
      body: Type.Union([
        Type.Object({ emails: Type.Array(Email, { minItems: 1, maxItems: MAX_BATCH }) }, { additionalProperties: false }),
        Type.Object({ ids: Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: MAX_BATCH }) }, { additionalProperties: false }),
      ]),
      response: { 200: withRateLimitHeaders(ResendSuppressionsRemoved, 'The removed entries.'), ...resendErrorResponses(...RESEND_BODY_ERRORS) },
    },
  }, async (request) => {
    const organizationId = request.mailAuth.organizationId;
    // One statement: all the entries named go, or (on a failure) none.
    const emails = 'emails' in request.body ? request.body.emails.map((e) => e.trim().toLowerCase()) : [];
    const ids = 'ids' in request.body ? request.body.ids.filter(isUuid) : [];
    const removed = await suppressions.removeAll(organizationId, emails, ids);
    return { data: removed.map((r) => ({ object: 'suppression' as const, id: r.id, deleted: true as const })) };
  });
}

/** The address's key (lower-cased), or 400 invalid_email naming the item, as addSuppression refuses a single address. */
function checkAddress(email: string, index: number): string {
  const address = parseEmail(email.trim());
  if (!address) throw new ApiError(400, 'invalid_email', `emails/${index} is not an email address.`, [{ path: `/emails/${index}`, message: 'not an email address' }]);
  return address.key;
}
