// Resend's template variables: {{{NAME}}} and {{{NAME|fallback}}} in a subject,
// HTML or text. A variable takes the value the caller finds for it (a send's
// `template.variables`, a contact's field or property), else its fallback
// (the tag's own, then the one the caller knows), else nothing. Values are
// HTML-escaped in the HTML part and kept to one line in the subject, as
// render.ts does for {{contact.x}}. {{{RESEND_UNSUBSCRIBE_URL}}} is left for the
// sender, which fills it per recipient. One pass over the input.
import { escapeHtml, type Part } from './render.ts';

export const UNSUBSCRIBE_VARIABLE = 'RESEND_UNSUBSCRIBE_URL';
const NAME = '[A-Za-z_][A-Za-z0-9_]{0,63}';
const VARIABLE = new RegExp(`\\{\\{\\{\\s*(${NAME})\\s*(?:\\|([^{}]{0,500}))?\\}\\}\\}`, 'g');
/** What tagProblems sees between {{ and the first }} of such a variable. */
export const VARIABLE_INNER = new RegExp(`^\\{\\s*${NAME}\\s*(?:\\|[^{}]{0,500})?$`);

/** A fallback as written: trimmed, and without the quotes around it if it has them. */
const fallbackOf = (text: string): string => {
  const t = text.trim();
  return /^".*"$|^'.*'$/.test(t) ? t.slice(1, -1) : t;
};

/** Thrown when filled variables make a part longer than the caller allows. */
export class VariablesTooLarge extends Error {
  constructor(part: Part, maxLength: number) {
    super(`the ${part} is longer than ${maxLength} characters once its variables are filled`);
  }
}

/**
 * The part with each variable replaced; `valueOf` answers a variable's value or its known fallback, or undefined.
 * Stops with VariablesTooLarge as soon as the output passes `maxLength` characters: many tags with a long
 * value would otherwise build a string of gigabytes (RangeError, memory) before any size check sees it.
 */
export function renderVariables(source: string, part: Part, valueOf: (name: string) => string | number | null | undefined, maxLength = Infinity): string {
  // Characters the output has gained (or lost) over the source so far.
  let grown = 0;
  return source.replace(VARIABLE, (tag: string, name: string, inline: string | undefined, offset: number) => {
    if (name === UNSUBSCRIBE_VARIABLE) return tag;
    const found = valueOf(name);
    const value = found !== null && found !== undefined && found !== '' ? String(found) : inline !== undefined ? fallbackOf(inline) : '';
    const out = part === 'html' ? escapeHtml(value) : part === 'subject' ? value.replace(/[\r\n]+/g, ' ') : value;
    grown += out.length - tag.length;
    // The output up to this tag's end is already this long: the whole can only be as long or longer.
    if (offset + tag.length + grown > maxLength) throw new VariablesTooLarge(part, maxLength);
    return out;
  });
}

/** The names of the variables a part uses (without the unsubscribe link). */
export function variablesOf(source: string | null): string[] {
  if (source === null) return [];
  return [...source.matchAll(VARIABLE)].map((m) => m[1]!).filter((name) => name !== UNSUBSCRIBE_VARIABLE);
}
