// The TypeBox schemas of broadcasts: the broadcast and its stats as answered, its
// list and paging, and the bodies of broadcast-routes.ts.
import { Type, type Static } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { Name, StringEnum } from '../../platform/http/schema-types.ts';
import { NullableTimestamp, Timestamp } from '../http/mail-schemas.ts';
import { PageOf, PageQuery } from '../http/pagination.ts';
import { BROADCAST_STATUSES, LIST_LIMIT } from './broadcasts.ts';

export const OneLine = (max: number, description: string) => Type.String({ minLength: 1, maxLength: max, pattern: '^[^\\r\\n]*$', description });
export const ScheduledAt = Type.String({ format: 'date-time', description: 'ISO 8601 with an offset.' });

export const AbTest = Type.Object(
  {
    percent: Type.Integer({ minimum: 10, maximum: 50, description: 'Share of the eligible recipients the test goes to first, split A/B by contact id.' }),
    wait_minutes: Type.Integer({ minimum: 30, maximum: 4320, description: 'How long the test runs before the winner is picked.' }),
    metric: StringEnum(['opens', 'clicks'] as const, { description: 'opens: opened (or clicked) messages over delivered; clicks: clicked over delivered. A tie or no data goes to A.' }),
  },
  { additionalProperties: false },
);

export const CreateBody = Type.Object(
  {
    name: Name(120, { description: 'Internal label.' }),
    from: Type.String({ minLength: 3, maxLength: 320, description: '`email` or `Name <email>` on a verified domain of the organization.' }),
    topic: Type.String({ minLength: 1, maxLength: 64, description: 'Topic slug.' }),
    segment_id: Type.Optional(Type.String({ description: 'A segment of the organization.' })),
    template: Type.Optional(Type.Object(
      { id: Type.Optional(Type.String()), slug: Type.Optional(Type.String()), version: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Literal('latest')])) },
      { additionalProperties: false, description: 'A published version; excludes subject, html and text.' },
    )),
    subject: Type.Optional(OneLine(998, 'Required without template.')),
    html: Type.Optional(Type.String({ description: 'At most 2 MB. html or text is required without template.' })),
    text: Type.Optional(Type.String({ description: 'At most 2 MB.' })),
    subject_b: Type.Optional(OneLine(998, 'The A/B subject: about half the recipients (by contact id) get it. Required with ab_test.')),
    ab_test: Type.Optional(AbTest),
    reply_to: Type.Optional(Type.String({ minLength: 3, maxLength: 320, description: 'Reply-To of every message.' })),
    preview_text: Type.Optional(OneLine(256, 'A hidden block at the top of the HTML part (not a header).')),
    scheduled_at: Type.Optional(ScheduledAt),
  },
  { additionalProperties: false },
);
export type CreateBody = Static<typeof CreateBody>;

export const Stats = Type.Object({
  eligible: Type.Integer({ description: 'Matched minus suppressed.' }),
  suppressed: Type.Integer(),
  queued: Type.Integer({ description: 'Recipient rows queued (in testing, also those waiting for the winner).' }),
  skipped: Type.Integer({ description: 'Contacts whose message could not be made.' }),
  testShare: Type.Optional(Type.Integer({ description: 'Messages the A/B test sent.' })),
  reason: Type.Optional(Type.String({ description: 'Why the worker ended the broadcast itself.' })),
});

export const BroadcastSchema = Type.Object(
  {
    object: Type.Literal('broadcast'),
    id: Type.String(),
    name: Type.String(),
    status: StringEnum(BROADCAST_STATUSES),
    from: Type.String(),
    domain: Type.String(),
    topic: Type.Union([Type.String(), Type.Null()], { description: 'The topic\'s slug; null only for a broadcast made at Resend\'s root paths without a topic.' }),
    segment_id: Type.Union([Type.String(), Type.Null()]),
    template: Type.Union([Type.Object({ id: Type.String(), slug: Type.String(), version: Type.Integer() }), Type.Null()]),
    subject: Type.String(),
    subject_b: Type.Union([Type.String(), Type.Null()]),
    ab_test: Type.Union([AbTest, Type.Null()]),
    ab_winner: Type.Union([StringEnum(['A', 'B'] as const), Type.Null()]),
    ab_decided_at: NullableTimestamp(),
    parent_id: Type.Union([Type.String(), Type.Null()]),
    reply_to: Type.Union([Type.String(), Type.Null()]),
    preview_text: Type.Union([Type.String(), Type.Null()]),
    scheduled_at: NullableTimestamp(),
    started_at: NullableTimestamp(),
    finished_at: NullableTimestamp({ description: 'When the last recipient\'s message was queued (sent), or when it was canceled.' }),
    stats: Type.Union([Stats, Type.Null()], { description: 'Written by the worker; null until it starts.' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Broadcast', title: 'Broadcast' },
);
export const BroadcastList = PageOf(ref(BroadcastSchema), 'BroadcastList');
/** The other mail lists' paging, with the spec's bound: up to 50 a page, 50 unless told. */
export const BroadcastPageQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIST_LIMIT, default: LIST_LIMIT, description: `Broadcasts per page (1 to ${LIST_LIMIT}, default ${LIST_LIMIT}).` })),
    cursor: PageQuery.properties.cursor,
  },
  { additionalProperties: false },
);

export const SendBroadcastBody = Type.Object({ scheduled_at: Type.Optional(ScheduledAt) }, { additionalProperties: false });
export const ResendBroadcastBody = Type.Object({ subject: Type.Optional(OneLine(998, 'Omitted: the parent\'s subject. Refused on a template broadcast.')), scheduled_at: Type.Optional(ScheduledAt) }, { additionalProperties: false });
