// JSON shapes of the links API. These TypeBox schemas validate requests and
// generate the OpenAPI document: one source of truth. Those with an $id are
// named components (LINK_COMPONENTS), referenced with ref().
import { Type, type Static } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { StringEnum, Uuid as UuidType } from '../../platform/http/schema-types.ts';
import { MAX_URL_LENGTH } from './url-rules.ts';
import { SHORT_ID_PATTERN } from './short-id.ts';
import { PIXEL_ID_FORMATS_TEXT } from './pixel-ids.ts';
import { LinkDomainName } from './link-domain.ts';
import { Utm } from './utm.ts';

export const PIXEL_PROVIDERS = ['meta', 'google', 'tiktok', 'linkedin', 'x', 'pinterest', 'snapchat', 'reddit'] as const;

const Url = (description: string) =>
  Type.String({ maxLength: MAX_URL_LENGTH, pattern: '^\\S+$', description: `${description} Absolute http(s) URL without credentials, at most ${MAX_URL_LENGTH} characters.`, examples: ['https://example.com/landing?ref=print'] });

export const Tag = Type.String({ minLength: 1, maxLength: 50, pattern: '^[^\\u0000-\\u001f]+$', description: 'Stored trimmed and lower-cased.' });
export const Tags = Type.Array(Tag, { maxItems: 20, description: 'Up to 20 tags; duplicates are dropped.' });

export const Pixel = Type.Object(
  {
    provider: StringEnum(PIXEL_PROVIDERS),
    pixelId: Type.String({
      minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$',
      description: `The provider's pixel or tag ID, of its documented form (else 400 invalid_pixel_id): ${PIXEL_ID_FORMATS_TEXT}.`,
    }),
  },
  {
    additionalProperties: false,
    description: 'A retargeting pixel. A link with pixels answers a browser with a small page that fires each pixel\'s page view and sends the visitor on within a second; crawlers and link-preview bots still get the plain 302.',
  },
);
export const Pixels = Type.Array(Pixel, { maxItems: 10 });

/** Text of a preview card: one line or a few, no control characters but line breaks. */
const PreviewText = (maxLength: number, description: string) =>
  Type.String({ minLength: 1, maxLength, pattern: '^[^\\u0000-\\u0009\\u000b\\u000c\\u000e-\\u001f\\u007f]+$', description });

export const ShortId = Type.String({ pattern: SHORT_ID_PATTERN, description: '3 to 64 characters: letters, digits, "-" and "_", starting with a letter or digit. Case-sensitive.', examples: ['spring-menu'] });
export const ExpiresAt = Type.String({ format: 'date-time', description: 'ISO 8601 time after which the link stops redirecting.', examples: ['2027-01-01T00:00:00Z'] });
export const ScanLimit = Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'Scans after which the link stops redirecting.' });
export const Uuid = UuidType();

export const ValidFrom = Type.String({ format: 'date-time', description: 'ISO 8601 time before which the link does not redirect (the refusal page, or `expiredUrl`).', examples: ['2027-01-01T00:00:00Z'] });
export const Geo = Type.Record(Type.String(), Url('Where visitors from this country go.'), {
  maxProperties: 250,
  description: 'Destination by visitor country: keys are ISO 3166-1 alpha-2 codes (any case, stored upper-case; else 400 invalid_country), the country looked up from the visitor\'s IP. An iOS or Android URL wins over it for those devices; it wins over `testVariants`. Empty or null: none.',
  examples: [{ DE: 'https://example.com/de', FR: 'https://example.com/fr' }],
});
export const TestVariant = Type.Object(
  { url: Url('Where visitors of this variant go.'), percent: Type.Integer({ minimum: 10, maximum: 90, description: 'Share of visitors, in percent.' }) },
  { additionalProperties: false, description: 'One destination of an A/B test.' },
);
export const TestVariants = Type.Array(TestVariant, {
  minItems: 2, maxItems: 4,
  description: 'A/B test: 2 to 4 destinations, each at least 10 %, summing to 100 (else 400 invalid_test_variants). Each visitor sticks to one (a hash of IP and User-Agent), and the scan records it (`variant`). Device and geo URLs win over it; null: none.',
});

export const Link = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    shortId: Type.String(),
    shortUrl: Type.String({ description: 'The short URL to print or share, on the link\'s domain (https:// for a branded domain).' }),
    domain: Type.String({ description: 'The host name of the link\'s domain: a branded domain of the workspace, or the service\'s base domain.' }),
    destination: Type.String(),
    iosUrl: Type.Union([Type.String(), Type.Null()]),
    androidUrl: Type.Union([Type.String(), Type.Null()]),
    tags: Type.Array(Type.String()),
    pixels: Type.Array(Pixel),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    scanLimit: Type.Union([Type.Integer(), Type.Null()]),
    exhaustedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the link used up its scan limit.' }),
    isActive: Type.Boolean({ description: 'False after DELETE (soft delete) or when deactivated by PATCH.' }),
    campaignId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    forwardQuery: Type.Boolean({ description: 'The short URL\'s query string is appended to the destination, after its own parameters.' }),
    clickId: Type.Boolean({ description: 'svc_cid=<click ID> is appended to the destination.' }),
    expiredUrl: Type.Union([Type.String(), Type.Null()], { description: 'Where the link sends visitors when it is expired, exhausted, deactivated or not valid yet, instead of the refusal page.' }),
    validFrom: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Before it the link does not redirect.' }),
    geo: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()], { description: 'Destination by visitor country (ISO 3166-1 alpha-2).' }),
    testVariants: Type.Union([Type.Array(TestVariant), Type.Null()], { description: 'A/B destinations.' }),
    title: Type.Union([Type.String(), Type.Null()], { description: 'Preview card: the title link-preview crawlers are shown (og:title).' }),
    description: Type.Union([Type.String(), Type.Null()], { description: 'Preview card: the description (og:description).' }),
    image: Type.Union([Type.String(), Type.Null()], { description: 'Preview card: the image URL (og:image).' }),
    utm: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()], { description: 'UTM parameters appended on the redirect ({source, medium, campaign, term, content}, the members set), or null.' }),
    passwordProtected: Type.Boolean({ description: 'Visitors must enter the link\'s password before they are sent on. The password itself is never answered.' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Link', title: 'Link' },
);
export type LinkType = Static<typeof Link>;

/** Fields an owner may give at creation and change later; optional, and null clears them. */
const settableFields = {
  iosUrl: Type.Optional(Type.Union([Url('Where iOS visitors go instead.'), Type.Null()])),
  androidUrl: Type.Optional(Type.Union([Url('Where Android visitors go instead.'), Type.Null()])),
  tags: Type.Optional(Tags),
  pixels: Type.Optional(Pixels),
  expiresAt: Type.Optional(Type.Union([ExpiresAt, Type.Null()])),
  scanLimit: Type.Optional(Type.Union([ScanLimit, Type.Null()])),
  campaignId: Type.Optional(Type.Union([Uuid, Type.Null()])),
  forwardQuery: Type.Optional(Type.Boolean({ description: 'Append the short URL\'s query string (less any svc_cid) to the destination, after its own parameters. Default true.' })),
  clickId: Type.Optional(Type.Boolean({ description: 'Append svc_cid=<click ID> to the destination (default true); false for destinations that break on extra parameters, such as pre-signed URLs. Conversions cannot be attributed to its scans then.' })),
  expiredUrl: Type.Optional(Type.Union([Url('Where visitors go when the link is expired, has used up its scan limit, is deactivated or is not valid yet, instead of the refusal page (no scan is recorded).'), Type.Null()])),
  validFrom: Type.Optional(Type.Union([ValidFrom, Type.Null()])),
  geo: Type.Optional(Type.Union([Geo, Type.Null()])),
  testVariants: Type.Optional(Type.Union([TestVariants, Type.Null()])),
  title: Type.Optional(Type.Union([PreviewText(200, 'Preview card title (og:title, twitter:title) shown by link-preview crawlers (Slack, WhatsApp, Facebook, X, LinkedIn, Discord…), which then get a page of Open Graph and Twitter tags instead of the redirect, not counted as a scan.'), Type.Null()])),
  description: Type.Optional(Type.Union([PreviewText(500, 'Preview card description (og:description, twitter:description).'), Type.Null()])),
  image: Type.Optional(Type.Union([Url('Preview card image (og:image, twitter:image).'), Type.Null()])),
  utm: Type.Optional(Type.Union([Utm, Type.Null()])),
  password: Type.Optional(Type.Union([Type.String({ minLength: 4, maxLength: 128, description: 'Visitors must enter it on a form before they are sent on (4 to 128 characters). Stored as a slow hash, never answered (see passwordProtected); null removes it.' }), Type.Null()])),
};

export const CreateLinkBody = Type.Object(
  {
    destination: Url('Where the link redirects.'),
    shortId: Type.Optional(ShortId),
    domain: Type.Optional(Type.Union([LinkDomainName, Type.Null()])),
    ...settableFields,
    isActive: Type.Optional(Type.Boolean({ description: 'Create the link deactivated with false (default true).' })),
  },
  { $id: 'CreateLink', additionalProperties: false, title: 'CreateLink', description: 'Optional fields may be left out or null.' },
);
export type CreateLinkInput = Static<typeof CreateLinkBody>;

export const UpdateLinkBody = Type.Object(
  {
    destination: Type.Optional(Url('Where the link redirects.')),
    ...settableFields,
    isActive: Type.Optional(Type.Boolean()),
  },
  { $id: 'UpdateLink', additionalProperties: false, minProperties: 1, title: 'UpdateLink', description: 'Fields to change; null clears an optional field.' },
);
export type UpdateLinkInput = Static<typeof UpdateLinkBody>;

export const LINK_SORTS = ['createdAt', 'updatedAt', 'shortId'] as const;

export const ListLinksQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Links whose short ID or destination contains it (case-insensitive), or that carry it as a tag (the whole tag, compared lower-cased).' })),
    tag: Type.Optional(Type.Array(Tag, { maxItems: 10, description: 'Only links carrying every given tag (repeat the parameter for several).' })),
    campaignId: Type.Optional(Uuid),
    isActive: Type.Optional(Type.Boolean()),
    sort: Type.Optional(StringEnum(LINK_SORTS, { default: 'createdAt' })),
    order: Type.Optional(StringEnum(['asc', 'desc'] as const, { description: 'Default: desc for dates, asc for shortId.' })),
    shortId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only the link with exactly this short ID.' })),
    domain: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'Only links on this domain (a branded domain\'s name, or the base domain\'s host).' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 500, description: 'nextCursor of the previous page.' })),
  },
  { additionalProperties: false },
);
export type ListLinksQueryType = Static<typeof ListLinksQuery>;

export const LinkList = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(ref(Link)),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  { $id: 'LinkList', title: 'LinkList' },
);

/** What the route validates: each operation is checked on its own by the handler (bulk.ts), so one bad operation does not refuse the others. */
export const BulkBody = Type.Object(
  { operations: Type.Array(Type.Unknown(), { minItems: 1, maxItems: 100, description: 'Up to 100 operations, each a BulkOperation.' }) },
  { additionalProperties: false, title: 'BulkLinks' },
);

// What the document shows for the same body: the operations as a union of named members.
export const BulkCreateLinkOperation = Type.Object(
  { action: Type.Literal('create'), link: ref(CreateLinkBody) },
  { $id: 'BulkCreateLinkOperation', title: 'BulkCreateLinkOperation', additionalProperties: false, description: 'Create a link.' },
);
export const BulkUpdateLinkOperation = Type.Object(
  { action: Type.Literal('update'), id: Type.String({ description: 'Link id.' }), changes: ref(UpdateLinkBody) },
  { $id: 'BulkUpdateLinkOperation', title: 'BulkUpdateLinkOperation', additionalProperties: false, description: 'Change a link.' },
);
export const BulkDeleteLinkOperation = Type.Object(
  { action: Type.Literal('delete'), id: Type.String({ description: 'Link id.' }) },
  { $id: 'BulkDeleteLinkOperation', title: 'BulkDeleteLinkOperation', additionalProperties: false, description: 'Soft-delete a link.' },
);
export const BulkOperation = Type.Unsafe<Static<typeof BulkCreateLinkOperation> | Static<typeof BulkUpdateLinkOperation> | Static<typeof BulkDeleteLinkOperation>>({
  $id: 'BulkOperation',
  title: 'BulkOperation',
  description: 'One operation, told apart by `action`; each is validated and applied on its own, so a bad one does not stop the others.',
  oneOf: [ref(BulkCreateLinkOperation), ref(BulkUpdateLinkOperation), ref(BulkDeleteLinkOperation)],
});
export const BulkLinksRequest = Type.Object(
  { operations: Type.Array(ref(BulkOperation), { minItems: 1, maxItems: 100, description: 'Up to 100 operations.' }) },
  { $id: 'BulkLinksRequest', title: 'BulkLinksRequest', additionalProperties: false },
);

export const BulkOperationError = Type.Object(
  { code: Type.String(), message: Type.String(), details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))) },
  { $id: 'BulkOperationError', title: 'BulkOperationError', description: 'Why the operation failed: the code and message it would have had on its own.' },
);

export const BulkOperationResult = Type.Object(
  {
    index: Type.Integer({ description: 'Position of the operation in the request.' }),
    action: Type.String(),
    status: Type.Integer({ description: 'HTTP status this operation would have had on its own.' }),
    link: Type.Optional(ref(Link)),
    error: Type.Optional(ref(BulkOperationError)),
  },
  { $id: 'BulkOperationResult', title: 'BulkOperationResult', description: 'The link when the operation succeeded, the error when it failed.' },
);

export const BulkResult = Type.Object(
  {
    object: Type.Literal('bulk_result'),
    succeeded: Type.Integer(),
    failed: Type.Integer(),
    results: Type.Array(ref(BulkOperationResult)),
  },
  { $id: 'BulkResult', title: 'BulkResult' },
);

/** The named schemas of links, registered with the link routes. */
export const LINK_COMPONENTS = [
  Link, LinkList, CreateLinkBody, UpdateLinkBody,
  BulkCreateLinkOperation, BulkUpdateLinkOperation, BulkDeleteLinkOperation, BulkOperation, BulkLinksRequest,
  BulkOperationError, BulkOperationResult, BulkResult,
];
