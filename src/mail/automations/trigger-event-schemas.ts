// The TypeBox schemas of trigger events (POST /events): the body and the answer.
// Component names keep the API's word (EventRequest, EventAccepted).
import { Type } from '@sinclair/typebox';
import { MAX_PROPERTIES_BYTES } from '../audience/contact-fields.ts';
import { EventName } from './automation-schemas.ts';

export const Properties = Type.Record(Type.String(), Type.Unknown(), { description: `Free-form JSON object, at most ${MAX_PROPERTIES_BYTES / 1024} KB.` });

export const EventBody = Type.Object(
  {
    event: EventName('The event\'s name; it starts a run of each enabled automation whose trigger is this name.'),
    email: Type.Optional(Type.String({ minLength: 3, maxLength: 320, description: 'The contact\'s address; an unknown one is created when the event starts a run.' })),
    contact_id: Type.Optional(Type.String({ description: 'A contact of the organization.' })),
    properties: Type.Optional(Properties),
    payload: Type.Optional(Properties),
  },
  { additionalProperties: false, $id: 'EventRequest', title: 'EventRequest' },
);

export const Accepted = Type.Object(
  {
    object: Type.Literal('event'),
    event: Type.String(),
    id: Type.String({ description: 'The accepted event (mail.inbound-events).' }),
    contact_id: Type.Union([Type.String(), Type.Null()], { description: 'null: an unknown address and no automation matched, so no contact was made.' }),
    contact_created: Type.Boolean(),
    runs_started: Type.Array(Type.String(), { description: 'The automation runs it started.' }),
  },
  { $id: 'EventAccepted', title: 'EventAccepted' },
);
