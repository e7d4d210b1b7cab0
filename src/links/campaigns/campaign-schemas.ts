// JSON shapes of campaigns (link folders).
import { Type, type Static } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { Name } from '../../platform/http/schema-types.ts';

export const Campaign = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    linkCount: Type.Integer({ description: 'Links in the campaign, active or not.' }),
    activeLinkCount: Type.Integer({ description: 'Active links in the campaign.' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Campaign', title: 'Campaign' },
);
export type CampaignType = Static<typeof Campaign>;

export const CreateCampaignBody = Type.Object(
  {
    name: Name(120, { description: 'Unique in the workspace, case-insensitively; stored trimmed.', examples: ['Spring menu 2027'] }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { $id: 'CreateCampaign', additionalProperties: false, title: 'CreateCampaign' },
);
export type CreateCampaignInput = Static<typeof CreateCampaignBody>;

export const UpdateCampaignBody = Type.Object(
  {
    name: Type.Optional(Name(120)),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
  },
  { $id: 'UpdateCampaign', additionalProperties: false, minProperties: 1, title: 'UpdateCampaign' },
);
export type UpdateCampaignInput = Static<typeof UpdateCampaignBody>;

export const ListCampaignsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

export const CampaignList = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(ref(Campaign)), nextCursor: Type.Union([Type.String(), Type.Null()]) },
  { $id: 'CampaignList', title: 'CampaignList' },
);

/** The named schemas of campaigns, registered with the campaign routes. */
export const CAMPAIGN_COMPONENTS = [Campaign, CampaignList, CreateCampaignBody, UpdateCampaignBody];
