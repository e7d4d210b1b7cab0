// How the API answers a template reference that names no published version.
import { ApiError } from '../../platform/http/errors.ts';
import type { ResolvedTemplate, TemplateRefusal, TemplateResolution } from './templates.ts';

export function templateRefusalMessage(r: TemplateRefusal): string {
  if (r.reason === 'template_not_found') return 'No template of this organization has that id or slug.';
  if (r.draft) return `Version ${r.asked} of the template is a draft; publish it first.`;
  return r.asked === 'latest' ? 'The template has no published version yet.' : `The template has no version ${r.asked}.`;
}

/** 404 for no such template, 422 for no such published version. */
export const templateRefusalError = (r: TemplateRefusal): ApiError =>
  new ApiError(r.reason === 'template_not_found' ? 404 : 422, r.reason, templateRefusalMessage(r));

/** The published version, or its refusal thrown as the API's answer. */
export function resolvedOrRefused(result: TemplateResolution): ResolvedTemplate {
  if (!result.ok) throw templateRefusalError(result.refusal);
  return result.template;
}
