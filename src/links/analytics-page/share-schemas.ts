// JSON shapes of a link's analytics shares (/api/v1/links/:id/analytics/shares)
// and of page tokens (/api/v1/analytics/page-tokens).
import { Type } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import { LISTED_SHARES, LIVE_SHARES_PER_LINK } from './share-store.ts';
import { MAX_TOKEN_MS } from './page-sessions.ts';

const DateTime = (description: string) => Type.String({ format: 'date-time', description });
const NullableDateTime = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

export const AnalyticsShare = Type.Object(
  {
    object: Type.Literal('analytics_share'),
    id: Type.String({ pattern: '^sh_[0-9A-Za-z]{24}$', description: 'The share id: the capability in its URL (142 random bits).' }),
    linkId: Type.String({ format: 'uuid' }),
    url: Type.String({ format: 'uri', description: 'The public page: /analytics/{id} on the service\'s host.' }),
    status: StringEnum(['active', 'expired', 'revoked'] as const, { description: 'active: the page answers; expired or revoked: it answers 404.' }),
    passwordProtected: Type.Boolean({ description: 'The page asks for the share\'s password first. The password itself is never answered.' }),
    expiresAt: NullableDateTime('From then on the page answers 404; null: never.'),
    revokedAt: NullableDateTime('When it was revoked; null: not revoked.'),
    createdAt: DateTime('When it was made.'),
  },
  { $id: 'AnalyticsShare', title: 'AnalyticsShare', description: 'A link\'s analytics shared as a public page.' },
);

export const AnalyticsShareList = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(ref(AnalyticsShare), { description: `The link's ${LISTED_SHARES} newest shares, newest first (expired and revoked ones too).` }),
  },
  { $id: 'AnalyticsShareList', title: 'AnalyticsShareList' },
);

export const CreateAnalyticsShareBody = Type.Object(
  {
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the page stops answering (in the future, before 2106). Default: never.' })),
    password: Type.Optional(Type.String({ minLength: 4, maxLength: 128, description: 'The page asks for it first (4 to 128 characters; wrong attempts are limited as a link password\'s). Stored as a slow hash, never answered.' })),
  },
  { $id: 'CreateAnalyticsShare', title: 'CreateAnalyticsShare', additionalProperties: false, description: `At most ${LIVE_SHARES_PER_LINK} active shares per link.` },
);

export const PageToken = Type.Object(
  {
    object: Type.Literal('analytics_page_token'),
    token: Type.String({ description: 'The secret: whoever has it sees the workspace\'s analytics page until it expires or the key is revoked. Shown only in this response.' }),
    url: Type.String({ format: 'uri', description: 'The workspace\'s analytics page with the token: /analytics?token=…' }),
    expiresAt: DateTime('When the token stops working.'),
  },
  { $id: 'AnalyticsPageToken', title: 'AnalyticsPageToken' },
);

export const CreatePageTokenBody = Type.Object(
  {
    expiresInSeconds: Type.Optional(Type.Integer({ minimum: 60, maximum: MAX_TOKEN_MS / 1000, default: 3600, description: 'How long the token works (60 s to 30 days; default an hour).' })),
  },
  { $id: 'CreateAnalyticsPageToken', title: 'CreateAnalyticsPageToken', additionalProperties: false },
);

export const SHARE_COMPONENTS = [AnalyticsShare, AnalyticsShareList, CreateAnalyticsShareBody, PageToken, CreatePageTokenBody];
