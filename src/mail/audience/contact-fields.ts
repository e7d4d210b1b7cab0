// The checks a contact's fields get, wherever it comes from (the API, an import).
import { parseEmail } from '../http/email-address.ts';

export const CONTACT_STATUSES = ['subscribed', 'unsubscribed'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];
export type PropertyValue = string | number | boolean | null;

export const MAX_PROPERTIES = 100;
export const MAX_PROPERTIES_BYTES = 16 * 1024;
export const MAX_NAME = 256;
export const PROPERTY_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** What is wrong with these properties, or undefined: a flat object of at most 100 names, 16 KB as JSON. */
export function propertiesProblem(properties: Record<string, unknown>): string | undefined {
  const names = Object.keys(properties);
  if (names.length > MAX_PROPERTIES) return `at most ${MAX_PROPERTIES} properties`;
  const bad = names.find((n) => !PROPERTY_NAME.test(n));
  if (bad !== undefined) return `property name "${bad.slice(0, 80)}" is not 1 to 64 of A-Z a-z 0-9 _ -`;
  for (const [name, value] of Object.entries(properties)) {
    const ok = value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
    if (!ok) return `property ${name} must be a string, a number, a boolean or null`;
  }
  if (Buffer.byteLength(JSON.stringify(properties)) > MAX_PROPERTIES_BYTES) return 'properties hold at most 16 KB as JSON';
  return undefined;
}

/** The stored form of an address (lower-cased), or undefined when it is not one. */
export const contactEmail = (value: string): string | undefined => parseEmail(value.trim())?.key;
