// Resend's contact fields as our contacts take them: `unsubscribed` is our status,
// properties given on an update are merged into the contact's (null removes one;
// /api/v1's PATCH replaces them as a whole).
import type { ContactStatus, PropertyValue } from './contact-fields.ts';

export type ResendProperties = Record<string, string | number | boolean | null>;

export const statusOf = (unsubscribed: boolean | undefined): ContactStatus | undefined => (unsubscribed === undefined ? undefined : unsubscribed ? 'unsubscribed' : 'subscribed');

/** The contact's properties with `given` merged in; a null value removes the property. */
export function mergedProperties(current: Record<string, PropertyValue>, given: ResendProperties): Record<string, PropertyValue> {
  const merged: Record<string, PropertyValue> = { ...current };
  for (const [key, value] of Object.entries(given)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** Properties of a new contact: null values set nothing. */
export const withoutNulls = (given: ResendProperties): Record<string, PropertyValue> => Object.fromEntries(Object.entries(given).filter(([, v]) => v !== null));
