// Personalisation of a message's subject, HTML and text for one contact:
//   {{contact.email}} {{contact.first_name}} {{contact.last_name}} {{contact.<property>}}
//   {{ contact.first_name | "there" }}  (the fallback when the value is missing or empty)
// and the unsubscribe link, {{{RESEND_UNSUBSCRIBE_URL}}} (Resend's) or {{unsubscribe_url}}:
// kept as written here, filled per recipient by the sender (fillUnsubscribeUrl).
// Values are HTML-escaped in the HTML part, taken as they are in the text part, and
// without line breaks in the subject (no header injection). A missing value renders
// empty. Anything else between {{ and }} is left as it is (and refused at publish,
// see tagProblems). One pass over the input: time linear in its size.
export interface RenderContact {
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  properties?: Record<string, string | number | boolean | null>;
}

export type Part = 'subject' | 'html' | 'text';

// Inside the braces: the name, then optionally | and a double-quoted fallback with \" and \\ escapes.
const TAG = /^\s*contact\.([A-Za-z0-9_-]{1,64})\s*(?:\|\s*"((?:[^"\\]|\\.){0,500})"\s*)?$/;
const MAX_TAG = 600;

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

function valueOf(contact: RenderContact, name: string): string {
  // Own properties only: {{contact.constructor}} must not reach Object.prototype.
  const property = contact.properties && Object.hasOwn(contact.properties, name) ? contact.properties[name] : undefined;
  const v = name === 'email' ? contact.email : name === 'first_name' ? contact.first_name : name === 'last_name' ? contact.last_name : property;
  return v === null || v === undefined ? '' : String(v);
}

/** Calls `onTag(inner, start)` for every {{ … }} and joins the text between them with what it returns. */
function eachTag(source: string, onTag: (inner: string, at: number) => string): string {
  let out = '';
  let from = 0;
  for (;;) {
    const open = source.indexOf('{{', from);
    if (open < 0) break;
    const close = source.indexOf('}}', open + 2);
    if (close < 0) break;
    out += source.slice(from, open) + onTag(source.slice(open + 2, close), open);
    from = close + 2;
  }
  return out + source.slice(from);
}

export function renderPart(source: string, part: Part, contact: RenderContact): string {
  return eachTag(source, (inner) => {
    const m = inner.length <= MAX_TAG ? TAG.exec(inner) : null;
    if (!m) return `{{${inner}}}`;
    let value = valueOf(contact, m[1]!);
    if (value === '' && m[2] !== undefined) value = m[2].replace(/\\(.)/g, '$1');
    if (part === 'html') return escapeHtml(value);
    if (part === 'subject') return value.replace(/[\r\n]+/g, ' ');
    return value;
  });
}

// The unsubscribe placeholders: Resend's triple-brace one and ours; `inner` is what eachTag sees between {{ and }}.
const UNSUBSCRIBE_PLACEHOLDER = /\{\{\{\s*RESEND_UNSUBSCRIBE_URL\s*\}\}\}|\{\{\s*unsubscribe_url\s*\}\}/g;
const UNSUBSCRIBE_INNER = /^(?:\{\s*RESEND_UNSUBSCRIBE_URL|\s*unsubscribe_url)\s*$/;

/** Whether the part asks for the recipient's unsubscribe link. */
export const hasUnsubscribePlaceholder = (source: string | null): boolean => source !== null && new RegExp(UNSUBSCRIBE_PLACEHOLDER.source).test(source);

/** The part with each unsubscribe placeholder replaced by `url` (HTML-escaped in the HTML part). */
export const fillUnsubscribeUrl = (source: string, part: 'html' | 'text', url: string): string =>
  source.replace(UNSUBSCRIBE_PLACEHOLDER, () => (part === 'html' ? escapeHtml(url) : url));

/**
 * The tags that are not personalisation tags, with their offsets: a template with any is not published.
 * `allowed` accepts more tags (Resend's {{{VARIABLE}}} at the root paths: resend-variables.ts).
 */
export function tagProblems(source: string, allowed?: RegExp): { at: number; tag: string }[] {
  const problems: { at: number; tag: string }[] = [];
  eachTag(source, (inner, at) => {
    if (UNSUBSCRIBE_INNER.test(inner) || allowed?.test(inner)) return '';
    if (inner.length > MAX_TAG || !TAG.test(inner)) problems.push({ at, tag: `{{${inner.slice(0, 80)}}}` });
    return '';
  });
  return problems;
}
