// Resend's /templates at the root, over the same templates and versions as
// /api/v1/templates: an alias (our slug; derived from the name when not given),
// From, Reply-To and declared variables kept with the content of each version;
// Resend's {{{VARIABLE}}} and {{{VARIABLE|fallback}}} beside {{contact.x}}.
// Edits change the draft; publish makes it the version sends use; duplicate
// copies the newest content into a new template.
import { Type } from '@sinclair/typebox';
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { Name, StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { PROPERTY_TYPES } from '../audience/contact-properties.ts';
import { checkPartSizes } from '../http/content-size.ts';
import { slugCandidate, slugOf } from '../http/derived-slug.ts';
import { parseMailbox } from '../http/email-address.ts';
import { NullableTimestamp, Timestamp } from '../http/mail-schemas.ts';
import { RESEND_BODY_ERRORS, RESEND_ERRORS, resendErrorResponses } from '../resend/resend-errors.ts';
import { resendPage, ResendListOf, ResendPageQuery } from '../resend/resend-pages.ts';
import { VARIABLE_INNER } from './resend-variables.ts';
import { templateListQuery, toResendTemplate, toResendTemplateItem, type TemplateListRow } from './resend-template-shape.ts';
import { checkPublishable } from './template-publishing.ts';
import type { Content, TemplateRow, Templates, TemplateVariable } from './templates.ts';

/** Bodies that may hold a subject, html and text of 2 MB each, escaped as JSON. */
const CONTENT_BODY_LIMIT = 12 * 1024 * 1024;
const SLUG_TRIES = 20;

// Resend documents no character rule (its aliases are lower-case words joined by hyphens, e.g.
// order-confirmation); an alias is our slug, so it takes /api/v1's slug rule and every template's
// alias is one /api/v1 can name.
const Alias = Type.String({ pattern: '^[a-z0-9-]{1,64}$', description: 'Our slug: 1 to 64 of a-z 0-9 and -, as /api/v1/templates\' slug; unique in the organization.' });
const Fallback = Type.Union([Type.String({ maxLength: 4096 }), Type.Number(), Type.Null()]);
const VariableInput = Type.Object(
  { key: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$' }), type: StringEnum(PROPERTY_TYPES), fallback_value: Type.Optional(Fallback) },
  { additionalProperties: false },
);
const ReplyTo = Type.Union([Type.String({ maxLength: 512 }), Type.Array(Type.String({ maxLength: 512 }), { maxItems: 50 })]);
const Subject = Type.String({ minLength: 1, maxLength: 998, pattern: '^[^\\r\\n]*$' });
const contentFields = {
  subject: Type.Optional(Subject),
  html: Type.Optional(Type.String({ description: 'At most 2 MB (UTF-8).' })),
  text: Type.Optional(Type.String({ description: 'At most 2 MB (UTF-8).' })),
  alias: Type.Optional(Alias),
  from: Type.Optional(Type.String({ maxLength: 512 })),
  reply_to: Type.Optional(ReplyTo),
  variables: Type.Optional(Type.Array(VariableInput, { maxItems: 50 })),
};

const ResendTemplateVariable = Type.Object({ key: Type.String(), type: StringEnum(PROPERTY_TYPES), fallback_value: Fallback, created_at: Timestamp(), updated_at: Timestamp() });
const ResendTemplate = Type.Object(
  {
    object: Type.Literal('template'), id: Type.String(), name: Type.String(), alias: Type.String(),
    status: StringEnum(['draft', 'published'] as const), subject: Type.Union([Type.String(), Type.Null()]), html: Type.String(), text: Type.Union([Type.String(), Type.Null()]),
    from: Type.Union([Type.String(), Type.Null()]), reply_to: Type.Union([Type.Array(Type.String()), Type.Null()]), variables: Type.Union([Type.Array(ResendTemplateVariable), Type.Null()]),
    published_at: NullableTimestamp(), created_at: Timestamp(), updated_at: Timestamp(), has_unpublished_versions: Type.Boolean(), current_version_id: Type.String(),
  },
  { $id: 'ResendTemplate', title: 'ResendTemplate' },
);
const ResendTemplateItem = Type.Object(
  { object: Type.Literal('template'), id: Type.String(), name: Type.String(), alias: Type.String(), status: StringEnum(['draft', 'published'] as const), published_at: NullableTimestamp(), created_at: Timestamp(), updated_at: Timestamp() },
  { $id: 'ResendTemplateItem', title: 'ResendTemplateItem' },
);
const ResendTemplateList = ResendListOf(ref(ResendTemplateItem), 'ResendTemplateList');
const ResendTemplateRef = Type.Object({ object: Type.Literal('template'), id: Type.String() }, { $id: 'ResendTemplateRef', title: 'ResendTemplateRef' });
const ResendTemplateRemoved = Type.Object({ object: Type.Literal('template'), id: Type.String(), deleted: Type.Literal(true) }, { $id: 'ResendTemplateRemoved', title: 'ResendTemplateRemoved' });
const TemplateParams = Type.Object({ id: Type.String({ maxLength: 128, description: 'The template\'s id or alias.' }) });

type ContentInput = { subject?: string; html?: string; text?: string; from?: string; reply_to?: string | string[]; variables?: { key: string; type: 'string' | 'number'; fallback_value?: string | number | null }[] };

/** The checked content of a create or update: addresses parse, fallbacks have their variable's type. */
function contentOf(body: ContentInput): Content {
  checkPartSizes(body);
  if (body.from !== undefined && !parseMailbox(body.from)) throw new ApiError(400, 'invalid_from', 'from must be "email" or "Name <email>".', [{ path: '/from', message: 'not an address' }]);
  const replyTo = body.reply_to === undefined ? undefined : Array.isArray(body.reply_to) ? body.reply_to : [body.reply_to];
  replyTo?.forEach((address, i) => {
    if (!parseMailbox(address)) throw new ApiError(400, 'invalid_reply_to', `reply_to: "${address.slice(0, 100)}" is not an email address.`, [{ path: `/reply_to/${i}`, message: 'not an address' }]);
  });
  const variables = body.variables?.map((v, i): TemplateVariable => {
    const fallback = v.fallback_value ?? null;
    if (fallback !== null && typeof fallback !== v.type) throw new ApiError(422, 'fallback_type_mismatch', `The fallback of ${v.key} must be a ${v.type}.`, [{ path: `/variables/${i}/fallback_value`, message: `must be a ${v.type}` }]);
    return { key: v.key, type: v.type, fallback_value: fallback };
  });
  const keys = variables?.map((v) => v.key) ?? [];
  if (new Set(keys).size !== keys.length) throw new ApiError(400, 'duplicate_variable', 'Each variable key once.', [{ path: '/variables', message: 'a key twice' }]);
  return {
    ...(body.subject !== undefined ? { subject: body.subject } : {}),
    ...(body.html !== undefined ? { html: body.html } : {}),
    ...(body.text !== undefined ? { text: body.text } : {}),
    ...(body.from !== undefined ? { from: body.from } : {}),
    ...(replyTo !== undefined ? { reply_to: replyTo } : {}),
    ...(variables !== undefined ? { variables } : {}),
  };
}

export async function resendTemplateRoutes(app: App, deps: { templates: Templates; pg: Pool }): Promise<void> {
  const { templates, pg } = deps;
  const tags = ['resend-templates'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [ResendTemplate, ResendTemplateItem, ResendTemplateList, ResendTemplateRef, ResendTemplateRemoved]);

  const templateOf = async (organizationId: string, idOrAlias: string) => {
    const row = await templates.find(organizationId, idOrAlias);
    if (!row) throw notFound('template');
    return row;
  };
  /** Tries the alias, or slugs derived from `name`, until one is free. */
  const withFreeSlug = async (alias: string | undefined, name: string, make: (slug: string) => Promise<TemplateRow | undefined>): Promise<TemplateRow> => {
    if (alias !== undefined) {
      const row = await make(alias);
      if (!row) throw new ApiError(409, 'template_exists', `The organization already has a template with the alias ${alias}.`);
      return row;
    }
    const base = slugOf(name);
    for (let n = 1; n <= SLUG_TRIES; n++) {
      const row = await make(slugCandidate(base, n));
      if (row) return row;
    }
    throw new ApiError(409, 'template_exists', `The organization has ${SLUG_TRIES} templates named like "${name}" already; give an alias.`);
  };

  app.post('/templates', {
    config,
    bodyLimit: CONTENT_BODY_LIMIT,
    schema: {
      tags, operationId: 'resendCreateTemplate', summary: 'Create a template (Resend\'s templates.create): its draft',
      body: Type.Object({ name: Name(120), ...contentFields }, { additionalProperties: false }),
      response: { 201: withRateLimitHeaders(ResendTemplateRef, 'The new template, a draft.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    const content = contentOf(request.body);
    const row = await withFreeSlug(request.body.alias, request.body.name, (slug) => templates.create(request.mailAuth.organizationId, slug, request.body.name, content));
    return reply.status(201).send({ object: 'template' as const, id: row.id });
  });

  app.get('/templates', {
    config,
    schema: { tags, operationId: 'resendListTemplates', summary: 'List templates', querystring: ResendPageQuery, response: { 200: withRateLimitHeaders(ResendTemplateList, 'Newest first.'), ...resendErrorResponses(...RESEND_ERRORS, 400) } },
  }, async (request) => resendPage<TemplateListRow, ReturnType<typeof toResendTemplateItem>>(pg, templateListQuery(request.mailAuth.organizationId), request.query, toResendTemplateItem));

  app.get('/templates/:id', {
    config,
    schema: { tags, operationId: 'resendGetTemplate', summary: 'Get a template by id or alias', description: 'Its newest content: the draft when there is one.', params: TemplateParams, response: { 200: withRateLimitHeaders(ResendTemplate, 'The template.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const row = await templateOf(request.mailAuth.organizationId, request.params.id);
    return toResendTemplate(row, await templates.versions(row.id));
  });

  app.patch('/templates/:id', {
    config,
    bodyLimit: CONTENT_BODY_LIMIT,
    schema: {
      tags, operationId: 'resendUpdateTemplate', summary: 'Edit a template: its name, alias or draft',
      description: 'Content edits change the draft (opened from the newest published version when needed); a published version never changes.',
      params: TemplateParams,
      body: Type.Object({ name: Type.Optional(Name(120)), ...contentFields }, { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(ResendTemplateRef, 'Updated.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404, 409) },
    },
  }, async (request) => {
    const row = await templateOf(request.mailAuth.organizationId, request.params.id);
    const content = contentOf(request.body);
    // The alias, name and draft in one transaction: a taken alias changes nothing.
    const alias = request.body.alias !== undefined && request.body.alias !== row.slug ? request.body.alias : undefined;
    if (!(await templates.update(row, request.body.name, content, alias))) {
      throw new ApiError(409, 'template_exists', `The organization already has a template with the alias ${request.body.alias}.`);
    }
    return { object: 'template' as const, id: row.id };
  });

  app.post('/templates/:id/publish', {
    config,
    schema: {
      tags, operationId: 'resendPublishTemplate', summary: 'Publish the draft: the version sends use',
      description: 'It needs a subject, html or text, and only {{contact.x}} and {{{VARIABLE}}} tags. 409 nothing_to_publish when there is no draft.',
      params: TemplateParams,
      response: { 200: withRateLimitHeaders(ResendTemplateRef, 'Published.'), ...resendErrorResponses(...RESEND_ERRORS, 400, 404, 409, 422) },
    },
  }, async (request) => {
    const row = await templateOf(request.mailAuth.organizationId, request.params.id);
    const published = await templates.publish(row, (draft) => checkPublishable(draft, VARIABLE_INNER));
    if (!published) throw new ApiError(409, 'nothing_to_publish', 'The template has no draft: edit it to open one.');
    return { object: 'template' as const, id: row.id };
  });

  app.post('/templates/:id/duplicate', {
    config,
    schema: {
      tags, operationId: 'resendDuplicateTemplate', summary: 'Copy a template into a new draft',
      description: 'Named "<name> (copy)", its alias derived from that name.',
      params: TemplateParams,
      response: { 201: withRateLimitHeaders(ResendTemplateRef, 'The copy, a draft.'), ...resendErrorResponses(...RESEND_ERRORS, 404, 409) },
    },
  }, async (request, reply) => {
    const row = await templateOf(request.mailAuth.organizationId, request.params.id);
    const name = `${row.name} (copy)`.slice(0, 120);
    const copy = await withFreeSlug(undefined, name, (slug) => templates.duplicate(row, slug, name));
    return reply.status(201).send({ object: 'template' as const, id: copy.id });
  });

  app.delete('/templates/:id', {
    config,
    schema: { tags, operationId: 'resendRemoveTemplate', summary: 'Remove a template and its versions', params: TemplateParams, response: { 200: withRateLimitHeaders(ResendTemplateRemoved, 'Removed.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const row = await templateOf(request.mailAuth.organizationId, request.params.id);
    await templates.delete(row);
    return { object: 'template' as const, id: row.id, deleted: true as const };
  });
}
