// The TypeBox schemas of contacts: the contact as answered, its list and path, and the
// bodies and query of contact-routes.ts (segments answer contacts in this shape too).
import { Type } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import { Timestamp } from '../http/mail-schemas.ts';
import { PageOf, PageQuery } from '../http/pagination.ts';
import { CONTACT_STATUSES, MAX_NAME } from './contact-fields.ts';

const PropertyValueSchema = Type.Union([Type.String({ maxLength: 4096 }), Type.Number(), Type.Boolean(), Type.Null()]);
const Properties = Type.Record(Type.String(), PropertyValueSchema, { description: 'Flat: names of 1 to 64 of A-Z a-z 0-9 _ -, at most 100, 16 KB as JSON; values strings, numbers, booleans or null.' });
const PersonName = Type.Union([Type.String({ maxLength: MAX_NAME }), Type.Null()]);

export const ContactSchema = Type.Object(
  {
    object: Type.Literal('contact'),
    id: Type.String(),
    email: Type.String({ description: 'Lower-cased; unique in the organization.' }),
    first_name: Type.Union([Type.String(), Type.Null()]),
    last_name: Type.Union([Type.String(), Type.Null()]),
    properties: Type.Record(Type.String(), PropertyValueSchema),
    status: StringEnum(CONTACT_STATUSES, { description: 'unsubscribed: receives no broadcast of any topic.' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Contact', title: 'Contact' },
);
export const ContactList = PageOf(ref(ContactSchema), 'ContactList');
export const ContactParams = Type.Object({ contact: Type.String({ description: 'The contact\'s id or email address.' }) });

export const ListContactsQuery = Type.Composite([PageQuery, Type.Object({ email: Type.Optional(Type.String({ maxLength: 254 })), status: Type.Optional(StringEnum(CONTACT_STATUSES)) })], { additionalProperties: false });
export const CreateContactBody = Type.Object({ email: Type.String({ maxLength: 254 }), first_name: Type.Optional(PersonName), last_name: Type.Optional(PersonName), properties: Type.Optional(Properties), status: Type.Optional(StringEnum(CONTACT_STATUSES, { default: 'subscribed' })) }, { additionalProperties: false });
export const UpdateContactBody = Type.Object({ email: Type.Optional(Type.String({ maxLength: 254 })), first_name: Type.Optional(PersonName), last_name: Type.Optional(PersonName), properties: Type.Optional(Properties), status: Type.Optional(StringEnum(CONTACT_STATUSES)) }, { additionalProperties: false, minProperties: 1 });
