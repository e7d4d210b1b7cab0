// A send with Resend's `template: {id, variables}`: the template's newest
// published version gives the subject, From and Reply-To the request does not,
// and its html and text with the {{{VARIABLES}}} filled (a variable's value is
// the request's, else the template's declared fallback, else the tag's own).
// The request may not also carry html or text. What comes out is an ordinary
// send, checked as any other (prepare-message.ts).
import { ApiError } from '../../platform/http/errors.ts';
import { isUuid } from '../../platform/http/validation.ts';
import { renderVariables, VariablesTooLarge } from '../templates/resend-variables.ts';
import { resolvedOrRefused } from '../templates/template-refusals.ts';
import type { Templates } from '../templates/templates.ts';
import { MAX_PART_BYTES, type SendEmailInput } from './email-schemas.ts';
import { prepareMessage, type PreparedMessage } from './prepare-message.ts';

/** The message of a send as prepareMessage makes it, its template filled in first, hashed as sent (a repeat is judged on the request, not the template's output). */
export async function prepareSend(templates: Templates, organizationId: string, input: SendEmailInput, headerKey: string | undefined, at = ''): Promise<PreparedMessage> {
  return prepareMessage(await withTemplate(templates, organizationId, input, at), headerKey, at, input);
}

export async function withTemplate(templates: Templates, organizationId: string, input: SendEmailInput, at = ''): Promise<SendEmailInput> {
  const { template: ref, ...rest } = input;
  if (ref === undefined) return input;
  if (input.html !== undefined || input.text !== undefined) {
    throw new ApiError(422, 'template_with_content', 'Send a template or html and text, not both.', [{ path: `${at}/template`, message: 'not with html or text' }]);
  }
  const template = resolvedOrRefused(await templates.resolve(organizationId, isUuid(ref.id) ? { id: ref.id } : { slug: ref.id }));
  const declared = new Map(template.variables.map((v) => [v.key, v.fallback_value]));
  // Own keys only: {{{constructor}}} must not reach Object.prototype.
  const valueOf = (name: string) => (ref.variables && Object.hasOwn(ref.variables, name) ? ref.variables[name] : undefined) ?? declared.get(name);
  const from = input.from ?? template.from ?? undefined;
  const replyTo = input.reply_to ?? template.reply_to ?? undefined;
  // Filling stops once a part passes the part limit, refused as an oversized html or text is (prepare-message.ts).
  const fill = (source: string, part: 'subject' | 'html' | 'text') => {
    try {
      return renderVariables(source, part, valueOf, MAX_PART_BYTES);
    } catch (err) {
      if (!(err instanceof VariablesTooLarge)) throw err;
      throw new ApiError(400, 'content_too_large', `The template's ${part} is larger than 2 MB once its variables are filled.`, [{ path: `${at}/template/variables`, message: 'too large once filled' }]);
    }
  };
  return {
    ...rest,
    ...(from !== undefined ? { from } : {}),
    ...(replyTo !== undefined ? { reply_to: replyTo } : {}),
    subject: fill(input.subject ?? template.subject, 'subject'),
    ...(template.html !== null ? { html: fill(template.html, 'html') } : {}),
    ...(template.text !== null ? { text: fill(template.text, 'text') } : {}),
  };
}
