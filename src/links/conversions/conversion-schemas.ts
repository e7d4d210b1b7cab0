// JSON shapes of conversion tracking (POST /api/v1/track) and of the
// scan → tracked click → conversion funnel.
import { Type, type Static } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { StringEnum, Uuid } from '../../platform/http/schema-types.ts';
import { IncludeBots } from '../analytics/analytics-schemas.ts';
import { DomainFilterParam } from '../short-links/link-domain.ts';

export const TRACK_TYPES = ['conversion', 'click'] as const;
export type TrackKind = (typeof TRACK_TYPES)[number];

/** Metadata: a flat object of at most 20 short values (stored and published as strings). */
// Keys are checked in conversions.ts (a JSON Schema record cannot bound its keys with a clear error).
export const Metadata = Type.Record(Type.String(), Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean()]), {
  maxProperties: 20,
  description: 'Up to 20 keys (1–64 characters) with string (≤500 characters), number or boolean values.',
});

export const TrackBody = Type.Object(
  {
    clickId: Type.String({ minLength: 1, maxLength: 200, description: 'The `svc_cid` value the destination received with the visitor.' }),
    type: Type.Optional(StringEnum(TRACK_TYPES, { default: 'conversion', description: '`click`: the visitor landed on the destination (the funnel\'s tracked-click step). `conversion` (default): a goal was reached.' })),
    event: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]*$', description: 'Event name, e.g. `purchase` or `signup` (default: the type).' })),
    amount: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000_000, description: 'Revenue in major units (12.5 = twelve and a half), at most 1,000,000,000 with at most 6 decimal places. Needs `currency`. Conversions only.' })),
    currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$', description: 'ISO 4217 code (case-insensitive), required with `amount`.' })),
    externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Your id for this event (order or customer id): the idempotency key. A repeat with the same type, event name and externalId records nothing new and returns the first record with `duplicate: true`.' })),
    metadata: Type.Optional(Metadata),
  },
  { $id: 'TrackRequest', additionalProperties: false, title: 'TrackRequest' },
);
export type TrackInput = Static<typeof TrackBody>;

/**
 * The Idempotency-Key header: externalId's meaning, for clients that retry a request whose answer
 * they never saw. Printable ASCII (a header value; the IETF httpapi draft's quoted form is unquoted).
 */
export const TrackHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({
    minLength: 1,
    maxLength: 128,
    pattern: '^[\\x20-\\x7E]+$',
    description: 'The idempotency key of this conversion, as `externalId` (and winning over it when both are sent): a repeat with the same type, event name and key records nothing new and answers 200 with the first record and `duplicate: true`. 1 to 128 printable ASCII characters; a value in double quotes (`"abc"`) means `abc`.',
  })),
});

/** The idempotency key a client sent: the header's (unquoted) when present, else the body's externalId. */
export function idempotencyKey(header: string | undefined, input: TrackInput): string | undefined {
  if (header === undefined) return input.externalId;
  const quoted = header.length >= 2 && header.startsWith('"') && header.endsWith('"');
  return quoted ? header.slice(1, -1) : header;
}

export const Conversion = Type.Object(
  {
    object: Type.Literal('conversion'),
    id: Uuid(),
    type: StringEnum(TRACK_TYPES),
    event: Type.String(),
    clickId: Type.String(),
    scanId: Uuid(),
    linkId: Uuid(),
    campaignId: Type.Union([Uuid(), Type.Null()]),
    amount: Type.Union([Type.Number(), Type.Null()]),
    currency: Type.Union([Type.String(), Type.Null()]),
    externalId: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Record(Type.String(), Type.String()),
    createdAt: Type.String({ format: 'date-time' }),
    duplicate: Type.Boolean({ description: 'True when externalId was seen before: nothing new was recorded and this is the first record.' }),
  },
  { $id: 'Conversion', title: 'Conversion' },
);
export type ConversionType = Static<typeof Conversion>;

export const FunnelQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Start (inclusive); default 30 days before `to`.' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'End (exclusive); default now.' })),
    linkId: Type.Optional(Uuid({ description: 'Only this link.' })),
    campaignId: Type.Optional(Uuid({ description: 'Only the links in this campaign now (as in /analytics).' })),
    domain: Type.Optional(DomainFilterParam),
    includeBots: Type.Optional(IncludeBots),
  },
  { additionalProperties: false },
);

export const Revenue = Type.Object(
  {
    currency: Type.String(),
    amount: Type.Number({ description: 'In major units (12.5 = twelve and a half), the JSON number nearest to `amountExact`: rounding amount × 10⁶ gives the exact millionths up to 2^53 of them (about 9 billion units); past that, read `amountExact`.' }),
    amountExact: Type.String({ pattern: '^[0-9]+(\\.[0-9]{1,6})?$', description: 'The same sum as an exact decimal string in major units ("15.75"), whatever its size.' }),
    conversions: Type.Integer(),
  },
  { $id: 'FunnelRevenue', title: 'FunnelRevenue', description: 'Revenue in one currency.' },
);

export const Funnel = Type.Object(
  {
    object: Type.Literal('funnel'),
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    linkId: Type.Union([Uuid(), Type.Null()]),
    campaignId: Type.Union([Uuid(), Type.Null()]),
    domain: Type.Union([Type.String(), Type.Null()], { description: 'The `domain` asked for, in lower case; null when the funnel is not narrowed to one.' }),
    scans: Type.Integer({ description: 'Scans in the range (bots excluded unless includeBots).' }),
    trackedClicks: Type.Integer({ description: 'Distinct scans whose visitor was reported landing (type `click`) in the range (those of bot scans excluded unless includeBots).' }),
    conversions: Type.Integer({ description: 'Conversions reported in the range (those of bot scans excluded unless includeBots).' }),
    convertedScans: Type.Integer({ description: 'Distinct scans with at least one conversion in the range.' }),
    clickRate: Type.Number({ description: 'trackedClicks / scans (0 when there are no scans; above 1 when clicks in the range come from earlier scans).' }),
    conversionRate: Type.Number({ description: 'convertedScans / scans (0 when there are no scans; above 1 when conversions in the range come from earlier scans).' }),
    revenue: Type.Array(ref(Revenue), { description: 'Revenue per currency, largest first; conversions without amount are not listed.' }),
    variants: Type.Array(
      Type.Object({
        variant: Type.String({ description: 'The test variant\'s URL.' }),
        scans: Type.Integer(),
        trackedClicks: Type.Integer(),
        conversions: Type.Integer(),
        convertedScans: Type.Integer(),
        clickRate: Type.Number(),
        conversionRate: Type.Number(),
        revenue: Type.Array(ref(Revenue), { description: 'The revenue of the variant\'s conversions per currency, largest first.' }),
      }),
      { description: 'The same steps for the scans of A/B test links (`testVariants`), by the variant each visitor was sent to, most scans first. A variant\'s clicks and conversions are those of its scans, reported in the range.' },
    ),
  },
  { $id: 'Funnel', title: 'Funnel' },
);
export type FunnelType = Static<typeof Funnel>;

/** The named schemas of conversions, registered with the conversion routes. */
export const CONVERSION_COMPONENTS = [TrackBody, Conversion, Revenue, Funnel];
