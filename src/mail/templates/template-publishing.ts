// What a draft needs to be published, at /api/v1 and at Resend's root paths
// alike: a subject, html or text, and no tag but the personalisation tags (and,
// at the root, Resend's {{{VARIABLES}}}).
import { ApiError } from '../../platform/http/errors.ts';
import { tagProblems } from './render.ts';
import type { VersionRow } from './templates.ts';

/** Refuses a draft that is not publishable; `allowed` accepts more tags than {{contact.x}} (tagProblems). */
export function checkPublishable(draft: VersionRow, allowed?: RegExp): void {
  if (!draft.subject) throw new ApiError(422, 'template_incomplete', 'The draft has no subject.', [{ path: '/subject', message: 'missing' }]);
  if (draft.html === null && draft.text_body === null) throw new ApiError(422, 'template_incomplete', 'The draft has neither html nor text.', [{ path: '/html', message: 'missing' }]);
  for (const [part, value] of [['subject', draft.subject], ['html', draft.html], ['text', draft.text_body]] as const) {
    const problem = value ? tagProblems(value, allowed)[0] : undefined;
    if (problem) {
      const tags = allowed ? '{{contact.<name>}}, {{contact.<name> | "fallback"}}, {{{VARIABLE}}} or {{{VARIABLE|fallback}}}' : '{{contact.<name>}} or {{contact.<name> | "fallback"}}';
      throw new ApiError(400, 'invalid_template_tag', `${problem.tag} at offset ${problem.at} of ${part} is not a personalisation tag (${tags}).`, [{ path: `/${part}`, message: `offset ${problem.at}` }]);
    }
  }
}
