// The TypeBox schemas of segments: the segment as answered, its lists, and the bodies
// of segment-routes.ts.
import { Type } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { Name } from '../../platform/http/schema-types.ts';
import { Timestamp } from '../http/mail-schemas.ts';
import { PageOf } from '../http/pagination.ts';
import { ContactSchema } from './contact-schemas.ts';

const FILTER_LANGUAGE = 'The filter language (README, "Segment filters"): conditions {field, op, value} and groups {all: […]}, {any: […]}, {not: …}.';
// Any value in a body: segment-filter.ts checks it, and answers 400 invalid_filter naming each problem.
const Filter = Type.Unknown({ description: FILTER_LANGUAGE });
// A stored filter passed that check, so it is an object (a condition or a group); said so for clients
// that check answers (an MCP client's schema check refuses a schema that constrains nothing).
const StoredFilter = Type.Object({}, { additionalProperties: true, description: FILTER_LANGUAGE });
export const SegmentSchema = Type.Object(
  { object: Type.Literal('segment'), id: Type.String(), name: Type.String(), filter: StoredFilter, created_at: Timestamp(), updated_at: Timestamp() },
  { $id: 'Segment', title: 'Segment' },
);
export const SegmentList = PageOf(ref(SegmentSchema), 'SegmentList');
export const SegmentContacts = PageOf(ref(ContactSchema), 'SegmentContactList');

export const CreateSegmentBody = Type.Object({ name: Name(120), filter: Filter }, { additionalProperties: false, required: ['name', 'filter'] });
export const UpdateSegmentBody = Type.Object({ name: Type.Optional(Name(120)), filter: Type.Optional(Filter) }, { additionalProperties: false, minProperties: 1 });
