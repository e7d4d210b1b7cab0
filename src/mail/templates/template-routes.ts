// /api/v1/templates (FULL keys): templates with versions. Paths take the
// template's id or slug. Edits change the draft (the newest version, opened from the
// last published one when needed); publish makes the draft immutable.
import { addComponents } from '../../platform/http/components.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { MAIL_BODY_ERRORS, MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import { checkPartSizes } from '../http/content-size.ts';
import { page, PageQuery } from '../http/pagination.ts';
import { renderPart } from './render.ts';
import { checkPublishable } from './template-publishing.ts';
import type { TemplateRow, Templates, VersionRow } from './templates.ts';
import { resolvedOrRefused } from './template-refusals.ts';
import { CreateTemplateBody, Params, RenderTemplateBody, Rendered, TemplateList, TemplateSchema, UpdateTemplateBody, VersionList, VersionParams, VersionSchema } from './template-schemas.ts';

/** Bodies that may hold a subject, html and text of 2 MB each, escaped as JSON. */
const CONTENT_BODY_LIMIT = 12 * 1024 * 1024;
const toVersion = (v: VersionRow) => ({ object: 'template_version' as const, template_id: v.template_id, version: v.version, subject: v.subject, html: v.html, text: v.text_body, published_at: v.published_at?.toISOString() ?? null, created_at: v.created_at.toISOString(), updated_at: v.updated_at.toISOString() });
const summary = (t: TemplateRow) => ({ object: 'template' as const, id: t.id, slug: t.slug, name: t.name, created_at: t.created_at.toISOString(), updated_at: t.updated_at.toISOString() });

export async function templateRoutes(app: App, deps: { templates: Templates; pg: Pool }): Promise<void> {
  const { templates, pg } = deps;
  const tags = ['templates'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [VersionSchema, TemplateSchema, TemplateList, VersionList, Rendered]);

  const templateOf = async (organizationId: string, idOrSlug: string) => {
    const row = await templates.find(organizationId, idOrSlug);
    if (!row) throw notFound('template');
    return row;
  };
  const full = async (t: TemplateRow) => {
    const versions = await templates.versions(t.id);
    const draft = versions.find((v) => !v.published_at) ?? null;
    return { ...summary(t), latest_published_version: versions.find((v) => v.published_at)?.version ?? null, draft: draft && toVersion(draft) };
  };

  app.post('/templates', {
    config,
    bodyLimit: CONTENT_BODY_LIMIT,
    schema: {
      tags, operationId: 'createTemplate', summary: 'Create a template (its draft version 1)',
      body: CreateTemplateBody,
      response: { 201: withRateLimitHeaders(TemplateSchema, 'The new template.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    checkPartSizes(request.body);
    const row = await templates.create(request.mailAuth.organizationId, request.body.slug, request.body.name, request.body);
    if (!row) throw new ApiError(409, 'template_exists', `The organization already has a template ${request.body.slug}.`);
    return reply.status(201).send(await full(row));
  });

  app.get('/templates', {
    config,
    schema: { tags, operationId: 'listTemplates', summary: 'List templates', querystring: PageQuery, response: { 200: withRateLimitHeaders(TemplateList, 'A page of templates.'), ...mailErrorResponses(...MAIL_ERRORS, 400) } },
  }, async (request) => page(pg, { ...templates.listQuery(request.mailAuth.organizationId), ...request.query }, summary));

  app.get('/templates/:template', {
    config,
    schema: { tags, operationId: 'getTemplate', summary: 'Get a template by id or slug', params: Params, response: { 200: withRateLimitHeaders(TemplateSchema, 'The template and its draft.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => full(await templateOf(request.mailAuth.organizationId, request.params.template)));

  app.patch('/templates/:template', {
    config,
    bodyLimit: CONTENT_BODY_LIMIT,
    schema: {
      tags, operationId: 'updateTemplate', summary: 'Rename a template or edit its draft',
      description: 'Content edits change the draft; when the newest version is published, a draft n+1 is opened from it first. A published version never changes.',
      params: Params,
      body: UpdateTemplateBody,
      response: { 200: withRateLimitHeaders(TemplateSchema, 'The template and its draft.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await templateOf(request.mailAuth.organizationId, request.params.template);
    checkPartSizes(request.body);
    const { name, ...content } = request.body;
    await templates.update(row, name, content);
    return full((await templates.find(row.organization_id, row.id))!);
  });

  app.post('/templates/:template/publish', {
    config,
    schema: {
      tags, operationId: 'publishTemplate', summary: 'Publish the draft: version n becomes immutable',
      description: 'The draft needs a subject, html or text, and no tag other than the personalisation tags (400 invalid_template_tag names the first). 409 nothing_to_publish when there is no draft.',
      params: Params,
      response: { 200: withRateLimitHeaders(VersionSchema, 'The published version.'), ...mailErrorResponses(...MAIL_ERRORS, 400, 404, 409, 422) },
    },
  }, async (request) => {
    const row = await templateOf(request.mailAuth.organizationId, request.params.template);
    const published = await templates.publish(row, checkPublishable);
    if (!published) throw new ApiError(409, 'nothing_to_publish', 'The template has no draft: edit it to open one.');
    return toVersion(published);
  });

  app.get('/templates/:template/versions', {
    config,
    schema: { tags, operationId: 'listTemplateVersions', summary: 'Every version of a template, newest first', params: Params, response: { 200: withRateLimitHeaders(VersionList, 'The versions.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const row = await templateOf(request.mailAuth.organizationId, request.params.template);
    return { object: 'list' as const, data: (await templates.versions(row.id)).map(toVersion) };
  });

  app.get('/templates/:template/versions/:version', {
    config,
    schema: { tags, operationId: 'getTemplateVersion', summary: 'One version of a template', params: VersionParams, response: { 200: withRateLimitHeaders(VersionSchema, 'The version.'), ...mailErrorResponses(...MAIL_ERRORS, 400, 404) } },
  }, async (request) => {
    const row = await templateOf(request.mailAuth.organizationId, request.params.template);
    const version = await templates.version(row.id, request.params.version);
    if (!version) throw notFound('template version');
    return toVersion(version);
  });

  app.post('/templates/:template/render', {
    config,
    schema: {
      tags, operationId: 'renderTemplate', summary: 'Preview a published version for a sample contact',
      params: Params,
      body: RenderTemplateBody,
      response: { 200: withRateLimitHeaders(Rendered, 'The rendered parts.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404, 422) },
    },
  }, async (request) => {
    const row = await templateOf(request.mailAuth.organizationId, request.params.template);
    const resolved = resolvedOrRefused(await templates.resolve(row.organization_id, { id: row.id, version: request.body.version ?? 'latest' }));
    const contact = request.body.contact;
    return {
      object: 'rendered_template' as const,
      version: resolved.version,
      subject: renderPart(resolved.subject, 'subject', contact),
      html: resolved.html === null ? null : renderPart(resolved.html, 'html', contact),
      text: resolved.text === null ? null : renderPart(resolved.text, 'text', contact),
    };
  });

  app.delete('/templates/:template', {
    config,
    schema: { tags, operationId: 'deleteTemplate', summary: 'Delete a template and its versions', params: Params, response: { 200: withRateLimitHeaders(TemplateList.properties.data.items, 'The deleted template.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => {
    const row = await templateOf(request.mailAuth.organizationId, request.params.template);
    await templates.delete(row);
    return summary(row);
  });
}
