// A contact in Resend's shape: `unsubscribed` for our status, and on a single
// contact its properties as Resend answers them, `{key: {type, value}}`, with the
// fallback value of each declared property the contact does not hold.
import { Type } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import { Timestamp } from '../http/mail-schemas.ts';
import { ResendListOf } from '../resend/resend-pages.ts';
import { PROPERTY_TYPES, type ContactPropertyRow } from './contact-properties.ts';
import type { PropertyValue } from './contact-fields.ts';
import type { ContactRow } from './contacts.ts';

const contactFields = {
  object: Type.Literal('contact'),
  id: Type.String(),
  email: Type.String(),
  first_name: Type.Union([Type.String(), Type.Null()]),
  last_name: Type.Union([Type.String(), Type.Null()]),
  unsubscribed: Type.Boolean({ description: 'Our status unsubscribed: receives no broadcast of any topic.' }),
  created_at: Timestamp(),
};
export const ResendContactItem = Type.Object(contactFields, { $id: 'ResendContactItem', title: 'ResendContactItem' });
export const ResendContact = Type.Object(
  {
    ...contactFields,
    properties: Type.Record(Type.String(), Type.Object({ type: StringEnum(PROPERTY_TYPES), value: Type.Union([Type.String(), Type.Number()]) }), {
      description: 'Numbers as number, every other value as string; a declared property the contact does not hold shows its fallback value.',
    }),
  },
  { $id: 'ResendContact', title: 'ResendContact' },
);
export const ResendContactList = ResendListOf(ref(ResendContactItem), 'ResendContactList');

export const toResendContactItem = (r: ContactRow) => ({
  object: 'contact' as const,
  id: r.id,
  email: r.email,
  first_name: r.first_name,
  last_name: r.last_name,
  unsubscribed: r.status === 'unsubscribed',
  created_at: r.created_at.toISOString(),
});

type Typed = { type: 'string'; value: string } | { type: 'number'; value: number };

const typed = (value: PropertyValue): Typed | undefined =>
  value === null ? undefined : typeof value === 'number' ? { type: 'number', value } : { type: 'string', value: String(value) };

export function toResendContact(r: ContactRow, declared: Map<string, ContactPropertyRow>) {
  const properties: Record<string, Typed> = {};
  for (const [key, p] of declared) {
    const fallback = p.fallback_value === null ? undefined : typed(p.fallback_value);
    if (fallback) properties[key] = fallback;
  }
  for (const [key, value] of Object.entries(r.properties)) {
    const t = typed(value);
    if (t) properties[key] = t;
  }
  return { ...toResendContactItem(r), properties };
}
