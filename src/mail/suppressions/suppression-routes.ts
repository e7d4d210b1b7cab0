// /api/v1/suppressions: the organization's suppression list (FULL keys). An address
// on it gets no message: /emails drops it from a message's recipients.
import { addComponents } from '../../platform/http/components.ts';
import { notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { MAIL_BODY_ERRORS, MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import { page, PageQuery } from '../http/pagination.ts';
import { addSuppression } from './suppression-operations.ts';
import { toSuppression, type Suppressions } from './suppressions.ts';
import { AddSuppressionBody, Params, SuppressionList, SuppressionSchema } from './suppression-schemas.ts';

export async function suppressionRoutes(app: App, deps: { suppressions: Suppressions; pg: Pool }): Promise<void> {
  const { suppressions, pg } = deps;
  const tags = ['suppressions'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [SuppressionSchema, SuppressionList]);

  const existing = async (organizationId: string, idOrEmail: string) => {
    const row = idOrEmail.includes('@') || isUuid(idOrEmail) ? await suppressions.find(organizationId, idOrEmail) : undefined;
    if (!row) throw notFound('suppression');
    return row;
  };

  app.post('/suppressions', {
    config,
    schema: {
      tags, operationId: 'addSuppression', summary: 'Add an address to the suppression list',
      description: 'Idempotent: an address already on the list answers 200 with its existing entry (its reason unchanged).',
      body: AddSuppressionBody,
      response: { 200: withRateLimitHeaders(SuppressionSchema, 'Already on the list.'), 201: withRateLimitHeaders(SuppressionSchema, 'Added.'), ...mailErrorResponses(...MAIL_BODY_ERRORS) },
    },
  }, async (request, reply) => {
    const { suppression, created } = await addSuppression(suppressions, request.mailAuth.organizationId, request.body);
    return reply.status(created ? 201 : 200).send(suppression);
  });

  app.get('/suppressions', {
    config,
    schema: { tags, operationId: 'listSuppressions', summary: 'List the suppression list', querystring: PageQuery, response: { 200: withRateLimitHeaders(SuppressionList, 'A page, newest first.'), ...mailErrorResponses(...MAIL_ERRORS, 400) } },
  }, async (request) => page(pg, { ...suppressions.listQuery(request.mailAuth.organizationId), ...request.query }, toSuppression));

  app.get('/suppressions/:idOrEmail', {
    config,
    schema: { tags, operationId: 'getSuppression', summary: 'Get a suppression by id or address', params: Params, response: { 200: withRateLimitHeaders(SuppressionSchema, 'The entry.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => toSuppression(await existing(request.mailAuth.organizationId, request.params.idOrEmail)));

  app.delete('/suppressions/:idOrEmail', {
    config,
    schema: { tags, operationId: 'removeSuppression', summary: 'Remove an address from the suppression list', params: Params, response: { 200: withRateLimitHeaders(SuppressionSchema, 'The removed entry.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const row = await existing(request.mailAuth.organizationId, request.params.idOrEmail);
    return toSuppression((await suppressions.remove(row.organization_id, row.id)) ?? row);
  });
}
