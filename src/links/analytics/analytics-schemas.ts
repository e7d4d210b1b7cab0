// Query parameters and answers of the analytics endpoints.
import { Type, type Static } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { StringEnum, Uuid } from '../../platform/http/schema-types.ts';
import { DomainFilterParam } from '../short-links/link-domain.ts';

export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

const Count = Type.Integer({ minimum: 0 });
const ValueCount = Type.Object({ value: Type.String(), count: Count }, { $id: 'AnalyticsValueCount', title: 'AnalyticsValueCount', description: 'How often one value was seen.' });
export const TimeBucket = Type.Object(
  { start: Type.String({ format: 'date-time' }), scans: Count, uniqueVisitors: Count },
  { $id: 'AnalyticsTimeBucket', title: 'AnalyticsTimeBucket', description: 'Scans in one bucket of the time series, from `start`.' },
);

/**
 * The one bot switch of analytics, the export, the funnel and the MCP tools: the same default
 * everywhere, so their totals agree. Bots are crawlers and link-preview fetchers (scans/crawler.ts).
 */
export const IncludeBots = Type.Boolean({
  default: false,
  description:
    'Count scans by crawlers and link-preview fetchers (Googlebot, Slackbot, facebookexternalhit…) too. Default false: they are left out. ' +
    'Generic HTTP clients (curl, python-requests, Node fetch, axios…) are not bots: their scans always count.',
});

const range = {
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Start (inclusive), rounded down to the hour, UTC. Default: 30 days before `to`.' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'End (exclusive), rounded up to the hour, UTC. Default: now.' })),
  interval: Type.Optional(Type.Unsafe<Interval>({ type: 'string', enum: [...INTERVALS], description: 'Time-series bucket. Default: hour up to 2 days, day up to 92 days, else week. At most 1000 buckets.' })),
  includeBots: Type.Optional(IncludeBots),
  top: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'Entries per ranked group.' })),
};

export const WorkspaceAnalyticsQuery = Type.Object(
  {
    ...range,
    linkId: Type.Optional(Uuid()),
    tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'Only links that carry this tag now.' })),
    campaignId: Type.Optional(Uuid({ description: 'Only links in this campaign now.' })),
    domain: Type.Optional(DomainFilterParam),
    country: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2}$', description: 'Only scans from this country (ISO 3166-1 alpha-2).' })),
  },
  { additionalProperties: false },
);

export const LinkAnalyticsQuery = Type.Object(
  { ...range, country: WorkspaceAnalyticsQuery.properties.country },
  { additionalProperties: false },
);

export const Analytics = Type.Object(
  {
    object: Type.Literal('analytics'),
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    interval: Type.String(),
    totalScans: Count,
    uniqueVisitors: Type.Integer({ minimum: 0, description: 'Distinct visitors (daily-salted IP+User-Agent hash), estimated with HyperLogLog (about 1.6% standard error).' }),
    timeseries: Type.Array(ref(TimeBucket)),
    topLinks: Type.Array(Type.Object({ shortId: Type.String(), linkId: Type.Union([Type.String(), Type.Null()]), scans: Count })),
    countries: Type.Array(Type.Object({ country: Type.String({ description: 'ISO 3166-1 alpha-2.' }), count: Count })),
    cities: Type.Array(Type.Object({ city: Type.String(), country: Type.String(), count: Count })),
    devices: Type.Array(Type.Object({ device: Type.String(), count: Count })),
    os: Type.Array(Type.Object({ os: Type.String(), count: Count })),
    browsers: Type.Array(Type.Object({ browser: Type.String(), count: Count })),
    referrers: Type.Array(Type.Object({ referrer: Type.String({ description: 'Referring host, or "(direct)".' }), count: Count })),
    utm: Type.Object({
      sources: Type.Array(ref(ValueCount)),
      mediums: Type.Array(ref(ValueCount)),
      campaigns: Type.Array(ref(ValueCount)),
      terms: Type.Array(ref(ValueCount)),
      contents: Type.Array(ref(ValueCount)),
    }),
    variants: Type.Array(
      Type.Object({ variant: Type.String({ description: 'The test variant\'s URL.' }), scans: Count, uniqueVisitors: Count }),
      { description: 'Scans of A/B test links (`testVariants`) by the variant each visitor was sent to, most first; visitors sent elsewhere by a device or geo URL are not in it.' },
    ),
    triggers: Type.Array(
      Type.Object({ trigger: StringEnum(['link', 'qr'] as const), scans: Count }),
      { description: 'The scans by how the visitor came: qr (scanned one of the QR codes the service renders for the link, whose short URL carries the `?qr` marker) or link (any other visit, and every scan stored before QR scans were told apart). Both always present, link first; they add up to totalScans.' },
    ),
  },
  { $id: 'Analytics', title: 'Analytics' },
);
export type AnalyticsType = Static<typeof Analytics>;

/** The named schemas of analytics, registered with the analytics routes. */
export const ANALYTICS_COMPONENTS = [ValueCount, TimeBucket, Analytics];

export const ExportQuery = Type.Object(
  {
    format: Type.Optional(Type.Unsafe<'csv' | 'json'>({ type: 'string', enum: ['csv', 'json'], default: 'csv' })),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Start (inclusive). Default: 30 days before `to`.' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'End (exclusive). Default: now.' })),
    linkId: Type.Optional(Uuid()),
    domain: Type.Optional(DomainFilterParam),
    includeBots: Type.Optional(IncludeBots),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50_000, default: 50_000, description: 'Rows, oldest first; at most 50,000.' })),
  },
  { additionalProperties: false },
);

/** Columns of an exported scan, in order. */
export const EXPORT_COLUMNS = [
  'scanId', 'timestamp', 'linkId', 'shortId', 'campaignId', 'destination', 'country', 'region', 'city', 'device', 'os', 'browser',
  'referrer', 'referrerHost', 'utmSource', 'utmMedium', 'utmCampaign', 'utmTerm', 'utmContent', 'isBot', 'visitorId', 'clickId', 'userAgent', 'variant',
  'trigger',
] as const;
