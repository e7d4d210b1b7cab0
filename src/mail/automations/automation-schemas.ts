// The TypeBox schemas of automations: the automation and its runs as answered, and
// the bodies and queries of automation-routes.ts; EventName is the trigger event's
// name, shared with trigger-event-schemas.ts.
import { Type, type Static } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { Name, StringEnum } from '../../platform/http/schema-types.ts';
import { NullableTimestamp, Timestamp } from '../http/mail-schemas.ts';
import { PageOf, PageQuery } from '../http/pagination.ts';
import { RUN_STATES } from './automations.ts';

export const MAX_STEPS = 20;
/** The longest delay before a step: 30 days. */
export const MAX_DELAY_MINUTES = 43_200;

/** Event names: what POST /events posts and a trigger matches, exactly. */
export const EventName = (description: string) => Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:\\-/]+$', description });

export const StepInput = Type.Object(
  {
    template: Type.Object(
      { id: Type.Optional(Type.String()), slug: Type.Optional(Type.String()), version: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Literal('latest')])) },
      { additionalProperties: false, description: 'A published version (default: the latest published), pinned when the automation is written.' },
    ),
    delay_minutes: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_DELAY_MINUTES, description: 'Wait before this step, after the previous one (0 to 43,200; default 0).' })),
  },
  { additionalProperties: false },
);

export const fields = {
  name: Name(120, { description: 'Internal label.' }),
  trigger: Type.Object({ event: EventName('The event name that starts a run.') }, { additionalProperties: false }),
  from: Type.String({ minLength: 3, maxLength: 320, description: '`email` or `Name <email>` on a verified domain of the organization.' }),
  reply_to: Type.Optional(Type.Union([Type.String({ minLength: 3, maxLength: 320 }), Type.Null()])),
  steps: Type.Array(StepInput, { minItems: 1, maxItems: MAX_STEPS }),
  enabled: Type.Optional(Type.Boolean({ description: 'Default true. A disabled automation starts no runs; its runs go on.' })),
};
export const CreateBody = Type.Object(fields, { additionalProperties: false });
export const ChangeBody = Type.Object(
  { name: Type.Optional(fields.name), trigger: Type.Optional(fields.trigger), from: Type.Optional(fields.from), reply_to: fields.reply_to, steps: Type.Optional(fields.steps), enabled: fields.enabled },
  { additionalProperties: false, minProperties: 1 },
);
export type StepsInput = Static<typeof fields.steps>;

export const AutomationSchema = Type.Object(
  {
    object: Type.Literal('automation'), id: Type.String(), name: Type.String(), trigger: Type.Object({ event: Type.String() }),
    from: Type.String(), reply_to: Type.Union([Type.String(), Type.Null()]),
    steps: Type.Array(Type.Object({ template: Type.Object({ id: Type.String(), slug: Type.String(), version: Type.Integer() }), delay_minutes: Type.Integer() })),
    enabled: Type.Boolean(), created_at: Timestamp(), updated_at: Timestamp(),
  },
  { $id: 'Automation', title: 'Automation' },
);
export const RunSchema = Type.Object(
  {
    object: Type.Literal('automation_run'), id: Type.String(), automation_id: Type.String(), contact_id: Type.String(), event_id: Type.String(),
    state: StringEnum(RUN_STATES, { description: 'running: its next step is due; waiting: for a step\'s delay; completed: every step queued its message; canceled: stopped (see reason).' }),
    step: Type.Integer({ description: 'The next step to take, from 0 (the number of steps once completed).' }),
    next_step_at: NullableTimestamp(), reason: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp(), updated_at: Timestamp(), finished_at: NullableTimestamp(),
  },
  { $id: 'AutomationRun', title: 'AutomationRun' },
);
export const AutomationList = PageOf(ref(AutomationSchema), 'AutomationList');
export const RunList = PageOf(ref(RunSchema), 'AutomationRunList');

export const DeletedAutomation = Type.Object({ object: Type.Literal('automation'), id: Type.String(), deleted: Type.Literal(true) });
export const ListRunsQuery = Type.Object({ ...PageQuery.properties, state: Type.Optional(StringEnum(RUN_STATES)) }, { additionalProperties: false });
