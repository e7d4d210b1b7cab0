// The TypeBox schemas of templates: the template and its versions as answered, a
// preview, and the bodies and paths of template-routes.ts.
import { Type } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { Name } from '../../platform/http/schema-types.ts';
import { NullableTimestamp, Timestamp } from '../http/mail-schemas.ts';
import { PageOf } from '../http/pagination.ts';

export const Subject = Type.Union([Type.String({ minLength: 1, maxLength: 998, pattern: '^[^\\r\\n]*$' }), Type.Null()]);
export const Part = Type.Union([Type.String(), Type.Null()], { description: 'At most 2 MB (UTF-8).' });

export const VersionSchema = Type.Object(
  { object: Type.Literal('template_version'), template_id: Type.String(), version: Type.Integer(), subject: Type.Union([Type.String(), Type.Null()]), html: Type.Union([Type.String(), Type.Null()]), text: Type.Union([Type.String(), Type.Null()]), published_at: NullableTimestamp({ description: 'null: the draft.' }), created_at: Timestamp(), updated_at: Timestamp() },
  { $id: 'TemplateVersion', title: 'TemplateVersion' },
);
export const TemplateSchema = Type.Object(
  {
    object: Type.Literal('template'), id: Type.String(), slug: Type.String(), name: Type.String(),
    latest_published_version: Type.Union([Type.Integer(), Type.Null()]),
    draft: Type.Union([ref(VersionSchema), Type.Null()], { description: 'The version edits change, if any.' }),
    created_at: Timestamp(), updated_at: Timestamp(),
  },
  { $id: 'Template', title: 'Template' },
);
export const TemplateList = PageOf(Type.Object({ object: Type.Literal('template'), id: Type.String(), slug: Type.String(), name: Type.String(), created_at: Timestamp(), updated_at: Timestamp() }), 'TemplateList');
export const VersionList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ref(VersionSchema)) }, { $id: 'TemplateVersionList', title: 'TemplateVersionList' });
export const Rendered = Type.Object({ object: Type.Literal('rendered_template'), version: Type.Integer(), subject: Type.String(), html: Type.Union([Type.String(), Type.Null()]), text: Type.Union([Type.String(), Type.Null()]) }, { $id: 'RenderedTemplate', title: 'RenderedTemplate' });
export const Params = Type.Object({ template: Type.String({ description: 'The template\'s id or slug.' }) });

export const CreateTemplateBody = Type.Object({ slug: Type.String({ pattern: '^[a-z0-9-]{1,64}$' }), name: Name(120), subject: Type.Optional(Subject), html: Type.Optional(Part), text: Type.Optional(Part) }, { additionalProperties: false });
export const UpdateTemplateBody = Type.Object({ name: Type.Optional(Name(120)), subject: Type.Optional(Subject), html: Type.Optional(Part), text: Type.Optional(Part) }, { additionalProperties: false, minProperties: 1 });
export const VersionParams = Type.Object({ template: Type.String(), version: Type.Integer({ minimum: 1, maximum: 1_000_000 }) });
export const RenderTemplateBody = Type.Object({
        version: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Literal('latest')])),
        contact: Type.Object({ email: Type.String({ maxLength: 254 }), first_name: Type.Optional(Type.Union([Type.String(), Type.Null()])), last_name: Type.Optional(Type.Union([Type.String(), Type.Null()])), properties: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]))) }, { additionalProperties: false }),
      }, { additionalProperties: false });
