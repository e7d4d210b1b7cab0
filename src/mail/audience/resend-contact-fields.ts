// Resend's contact fields as our contacts take them: `unsubscribed` is our status,
// properties given on an update are merged into the contact's (null removes one;
// /api/v1's PATCH replaces them as a whole), and a declared property's value must
// have its declared type (contact-properties.ts).
import { ApiError } from '../../platform/http/errors.ts';
import type { ContactStatus, PropertyValue } from './contact-fields.ts';
import type { ContactPropertyRow } from './contact-properties.ts';

export type ResendProperties = Record<string, string | number | boolean | null>;

export const statusOf = (unsubscribed: boolean | undefined): ContactStatus | undefined => (unsubscribed === undefined ? undefined : unsubscribed ? 'unsubscribed' : 'subscribed');

/** 422 invalid_property_type when a declared property gets a value of another type. */
export function checkDeclaredTypes(properties: ResendProperties, declared: Map<string, ContactPropertyRow>): void {
  for (const [key, value] of Object.entries(properties)) {
    const p = declared.get(key);
    if (!p || value === null) continue;
    if (typeof value !== p.type) {
      throw new ApiError(422, 'invalid_property_type', `Property ${key} is declared as a ${p.type}.`, [{ path: `/properties/${key}`, message: `must be a ${p.type}` }]);
    }
  }
}

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
