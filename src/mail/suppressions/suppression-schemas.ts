// The TypeBox schemas of the suppression list: an entry as answered, its list, and
// the body and path of suppression-routes.ts.
import { Type } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import { Timestamp } from '../http/mail-schemas.ts';
import { PageOf } from '../http/pagination.ts';
import { SUPPRESSION_REASONS } from './suppressions.ts';

export const SuppressionSchema = Type.Object(
  { object: Type.Literal('suppression'), id: Type.String(), email: Type.String({ description: 'Lower-cased.' }), reason: StringEnum(SUPPRESSION_REASONS), created_at: Timestamp() },
  { $id: 'Suppression', title: 'Suppression' },
);
export const SuppressionList = PageOf(ref(SuppressionSchema), 'SuppressionList');
export const Params = Type.Object({ idOrEmail: Type.String({ description: 'The suppression\'s id or its email address.' }) });

export const AddSuppressionBody = Type.Object({ email: Type.String({ maxLength: 254 }), reason: Type.Optional(StringEnum(SUPPRESSION_REASONS, { default: 'manual' })) }, { additionalProperties: false });
