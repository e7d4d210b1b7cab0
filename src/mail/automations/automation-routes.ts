// /api/v1/automations (FULL keys: access `manage`): create, list, get, change,
// delete, and the runs of one (GET /:id/runs). An automation is a trigger event
// name, a From on a verified domain, and 1 to 20 steps, each sending a published
// template version after an optional delay. A domain-restricted key sees only the
// automations sending from its domains.
import { addComponents } from '../../platform/http/components.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { MailKeyGrant } from '../accounts/mail-keys.ts';
import { fromDomainRefusal } from '../auth/permissions.ts';
import type { Domains } from '../domains/domains.ts';
import { parseMailbox } from '../http/email-address.ts';
import { MAIL_BODY_ERRORS, MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import { IdParams } from '../http/mail-schemas.ts';
import { page, PageQuery } from '../http/pagination.ts';
import type { Templates } from '../templates/templates.ts';
import { templateRefusalMessage } from '../templates/template-refusals.ts';
import { toAutomation, toRun, type AutomationStep, type Automations, type NewAutomation } from './automations.ts';
import { AutomationList, AutomationSchema, ChangeBody, CreateBody, DeletedAutomation, ListRunsQuery, RunList, RunSchema, type StepsInput } from './automation-schemas.ts';

export interface AutomationRouteDeps {
  automations: Automations;
  domains: Domains;
  templates: Templates;
  pg: Pool;
}

export async function automationRoutes(app: App, deps: AutomationRouteDeps): Promise<void> {
  const { automations, domains, templates, pg } = deps;
  const config = { mailAccess: 'manage' as const };
  const tags = ['automations'];
  addComponents(app, [AutomationSchema, RunSchema, AutomationList, RunList]);

  const found = async (grant: MailKeyGrant, id: string) => {
    const row = isUuid(id) ? await automations.get(grant.organizationId, id, grant.domains) : undefined;
    if (!row) throw notFound('automation');
    return row;
  };

  /** From and Reply-To checked as for a broadcast. */
  const sender = async (grant: MailKeyGrant, from: string) => {
    const mailbox = parseMailbox(from);
    if (!mailbox) throw new ApiError(400, 'invalid_from', 'from must be `email` or `Name <email>`.', [{ path: '/from', message: 'not an address' }]);
    const refusal = fromDomainRefusal(grant, mailbox.domain, await domains.verifiedNames(grant.organizationId));
    if (refusal) throw refusal;
    return { from_address: from.trim(), from_domain: mailbox.domain };
  };
  const replyTo = (value: string | null | undefined) => {
    if (value && !parseMailbox(value)) throw new ApiError(400, 'invalid_reply_to', 'reply_to must be `email` or `Name <email>`.', [{ path: '/reply_to', message: 'not an address' }]);
    return value ?? null;
  };

  /** Each step's template resolved to a published version, which the automation keeps. */
  const pinSteps = (organizationId: string, steps: StepsInput): Promise<AutomationStep[]> =>
    Promise.all(steps.map(async (step, i) => {
      if (!step.template.id && !step.template.slug) throw new ApiError(400, 'invalid_template', 'A step\'s template needs an id or a slug.', [{ path: `/steps/${i}/template`, message: 'id or slug required' }]);
      const resolved = await templates.resolve(organizationId, step.template);
      if (!resolved.ok) {
        // A step's template that names no published version makes the automation unprocessable (422, not 404).
        const message = templateRefusalMessage(resolved.refusal);
        throw new ApiError(422, resolved.refusal.reason, `Step ${i}: ${message}`, [{ path: `/steps/${i}/template`, message }]);
      }
      const t = resolved.template;
      return { template_id: t.id, template_slug: t.slug, version: t.version, delay_minutes: step.delay_minutes ?? 0 };
    }));

  app.post('/automations', {
    config,
    schema: {
      tags, operationId: 'createAutomation', summary: 'Create an automation',
      description: 'Runs start when POST /events posts its trigger event (enabled automations only). Templates must have a published version; the version is pinned.',
      body: CreateBody,
      response: { 201: withRateLimitHeaders(AutomationSchema, 'The new automation.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 422) },
    },
  }, async (request, reply) => {
    const grant = request.mailAuth;
    const body = request.body;
    const automation: NewAutomation = {
      name: body.name,
      trigger_event: body.trigger.event,
      ...(await sender(grant, body.from)),
      reply_to: replyTo(body.reply_to),
      steps: await pinSteps(grant.organizationId, body.steps),
      enabled: body.enabled ?? true,
    };
    return reply.status(201).send(toAutomation(await automations.create(grant.organizationId, automation)));
  });

  app.get('/automations', {
    config,
    schema: { tags, operationId: 'listAutomations', summary: 'List automations', querystring: PageQuery, response: { 200: withRateLimitHeaders(AutomationList, 'A page of automations.'), ...mailErrorResponses(...MAIL_ERRORS, 400) } },
  }, async (request) => page(pg, { ...automations.listQuery(request.mailAuth.organizationId, request.mailAuth.domains), ...request.query }, toAutomation));

  app.get('/automations/:id', {
    config,
    schema: { tags, operationId: 'getAutomation', summary: 'Get an automation', params: IdParams, response: { 200: withRateLimitHeaders(AutomationSchema, 'The automation.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => toAutomation(await found(request.mailAuth, request.params.id)));

  app.patch('/automations/:id', {
    config,
    schema: {
      tags, operationId: 'updateAutomation', summary: 'Change an automation (or enable, disable it)',
      description: 'Runs already started keep the steps they started with.',
      params: IdParams, body: ChangeBody,
      response: { 200: withRateLimitHeaders(AutomationSchema, 'The automation.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404, 422) },
    },
  }, async (request) => {
    const grant = request.mailAuth;
    const row = await found(grant, request.params.id);
    const body = request.body;
    const change: Partial<NewAutomation> = {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.trigger !== undefined ? { trigger_event: body.trigger.event } : {}),
      ...(body.from !== undefined ? await sender(grant, body.from) : {}),
      ...(body.reply_to !== undefined ? { reply_to: replyTo(body.reply_to) } : {}),
      ...(body.steps !== undefined ? { steps: await pinSteps(grant.organizationId, body.steps) } : {}),
      ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    };
    return toAutomation(await automations.update(row, change));
  });

  app.delete('/automations/:id', {
    config,
    schema: {
      tags, operationId: 'deleteAutomation', summary: 'Delete an automation and its runs', params: IdParams,
      response: { 200: withRateLimitHeaders(DeletedAutomation, 'Deleted.'), ...mailErrorResponses(...MAIL_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await found(request.mailAuth, request.params.id);
    await automations.delete(row);
    return { object: 'automation' as const, id: row.id, deleted: true as const };
  });

  app.get('/automations/:id/runs', {
    config,
    schema: {
      tags, operationId: 'listAutomationRuns', summary: 'The runs of an automation, newest first', params: IdParams,
      querystring: ListRunsQuery,
      response: { 200: withRateLimitHeaders(RunList, 'A page of runs.'), ...mailErrorResponses(...MAIL_ERRORS, 400, 404) },
    },
  }, async (request) => {
    const row = await found(request.mailAuth, request.params.id);
    const { state, ...paging } = request.query;
    return page(pg, { ...automations.runsQuery(row.id, state), ...paging }, toRun);
  });
}
