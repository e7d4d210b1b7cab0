// Email addresses as the mail API takes them: `email` or `Name <email>`. The
// check is a practical one (what real senders accept), not all of RFC 5322:
// a local part of printable characters without spaces, quotes, brackets or
// separators (at most 64), a domain of two or more DNS labels, 254 at most.
const LOCAL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}$/;
const DOMAIN = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;
const NAMED = /^\s*(?:"((?:[^"\\\r\n]|\\.){0,200})"|([^<>"\r\n]{0,200}?))\s*<([^<>\s]+)>\s*$/;

export interface Mailbox {
  /** The display name, or null. */
  name: string | null;
  /** The address, its domain lower-cased. */
  email: string;
  /** Lower-cased address, for matching (suppressions, contacts). */
  key: string;
  domain: string;
}

/** A bare address (`local@domain`), or undefined when it is not one. */
export function parseEmail(value: string): { email: string; key: string; domain: string } | undefined {
  if (value.length > 254) return undefined;
  const at = value.lastIndexOf('@');
  if (at < 1) return undefined;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1).toLowerCase();
  if (!LOCAL.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..') || !DOMAIN.test(domain)) return undefined;
  const email = `${local}@${domain}`;
  return { email, key: email.toLowerCase(), domain };
}

/** `email` or `Name <email>` (the name optionally quoted), or undefined. */
export function parseMailbox(value: string): Mailbox | undefined {
  const bare = parseEmail(value.trim());
  if (bare) return { name: null, ...bare };
  const m = NAMED.exec(value);
  if (!m) return undefined;
  const address = parseEmail(m[3]!);
  if (!address) return undefined;
  const name = (m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!).trim();
  return { name: name || null, ...address };
}

/** The mailbox as a header value: the name quoted when it holds characters that need it. */
export function formatMailbox(mailbox: Mailbox): string {
  if (!mailbox.name) return mailbox.email;
  const name = /^[A-Za-z0-9 !#$%&'*+/=?^_`{|}~-]+$/.test(mailbox.name) ? mailbox.name : `"${mailbox.name.replace(/(["\\])/g, '\\$1')}"`;
  return `${name} <${mailbox.email}>`;
}
