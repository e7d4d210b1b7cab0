// One contact's message of a broadcast: the subject of its variant, the HTML and
// text personalised, and the preview text as a hidden block at the top of the HTML
// part (never a header; the text part is unchanged). Personalised with the spec's
// {{contact.x}}; a broadcast made at Resend's root paths also with Resend's
// {{{FIRST_NAME}}}, {{{LAST_NAME}}}, {{{EMAIL}}} and {{{<property>}}} (each with its own
// |fallback); {{{RESEND_UNSUBSCRIBE_URL}}} is filled by the sender, per recipient.
// An /api/v1 broadcast renders as the spec says: a {{{X}}} in it stays as written.
import { escapeHtml, renderPart, type Part, type RenderContact } from '../templates/render.ts';
import { renderVariables } from '../templates/resend-variables.ts';
import { MAX_PART_BYTES } from '../emails/email-schemas.ts';
import type { BroadcastRow } from './broadcasts.ts';

export interface RenderedMessage {
  subject: string;
  html: string | null;
  text: string | null;
}

/** Hidden in mail clients, shown by them in the inbox list after the subject. */
const previewBlock = (preview: string) =>
  `<div style="display:none;font-size:1px;line-height:1px;max-height:0;max-width:0;opacity:0;overflow:hidden;mso-hide:all">${preview}</div>`;

/** A contact's value for one of Resend's variables: its fields by Resend's names, else its property of that name. */
function variableOf(contact: RenderContact, name: string): string | number | boolean | null | undefined {
  if (name === 'FIRST_NAME') return contact.first_name;
  if (name === 'LAST_NAME') return contact.last_name;
  if (name === 'EMAIL') return contact.email;
  // Own properties only: {{{constructor}}} must not reach Object.prototype.
  const properties = contact.properties;
  return properties && Object.hasOwn(properties, name) ? (properties[name] as string | number | boolean | null) : undefined;
}

/** A part with the spec's tags filled for the contact, and Resend's too for a broadcast made at the root. */
const personalised = (b: BroadcastRow, source: string, part: Part, contact: RenderContact): string => {
  const rendered = renderPart(source, part, contact);
  if (!b.resend_face) return rendered;
  return renderVariables(rendered, part, (name) => {
    const value = variableOf(contact, name);
    return typeof value === 'boolean' ? String(value) : value;
  }, MAX_PART_BYTES); // too large: the contact is skipped with the reason (fan-out.ts)
};

/** The contact's message with `subject` (A's, B's or the winner's); throws when it cannot be made. */
export function renderBroadcastMessage(b: BroadcastRow, subject: string, contact: RenderContact): RenderedMessage {
  const renderedSubject = personalised(b, subject, 'subject', contact).trim();
  if (renderedSubject === '') throw new Error('the subject renders empty for this contact');
  let html = b.html === null ? null : personalised(b, b.html, 'html', contact);
  if (html !== null && b.preview_text) {
    const block = previewBlock(escapeHtml(personalised(b, b.preview_text, 'subject', contact)));
    const body = /<body\b[^>]*>/i.exec(html);
    html = body ? html.slice(0, body.index + body[0].length) + block + html.slice(body.index + body[0].length) : block + html;
  }
  return { subject: renderedSubject, html, text: b.text_body === null ? null : personalised(b, b.text_body, 'text', contact) };
}

/** A or B for a contact, by its id: about half each (ids are random). */
export const variantOf = (contactId: string): 'A' | 'B' => (parseInt(contactId.slice(-1), 16) % 2 === 0 ? 'A' : 'B');
