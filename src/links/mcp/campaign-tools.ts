// MCP tools over campaigns (link folders): list_campaigns and create_campaign,
// through the CampaignStore that the REST routes use, with the REST query and
// body schemas as their arguments.
import { Type } from '@sinclair/typebox';
import { CREATES, defineTool, READ_ONLY, withDefault } from '../../platform/mcp/tool.ts';
import { Campaign, CreateCampaignBody, ListCampaignsQuery, type CampaignType } from '../campaigns/campaign-schemas.ts';
import type { CampaignStore } from '../campaigns/campaign-store.ts';
import { campaignOrRefused } from '../campaigns/campaign-refusals.ts';
import { describedFor, pageSummary } from './tool-schemas.ts';

const campaignLine = (c: CampaignType): string => `- ${c.name} (id ${c.id}): ${c.linkCount} link${c.linkCount === 1 ? '' : 's'}, ${c.activeLinkCount} active`;

const query = ListCampaignsQuery.properties;

export function campaignTools(store: CampaignStore) {
  const listCampaigns = defineTool({
    name: 'list_campaigns',
    title: 'List campaigns',
    description:
      'Lists the campaigns (link folders) of the workspace, newest first, each with its id, name, description and link counts (all links and active ones). ' +
      'A link joins a campaign through create_link `campaignId`. Paginated like list_links: pass `nextCursor` back as `cursor`.',
    input: Type.Object(
      {
        limit: withDefault(describedFor(query.limit, 'Campaigns per page, 1 to 100; default 50.')),
        cursor: describedFor(query.cursor, 'nextCursor of the previous page, unchanged.'),
      },
      { additionalProperties: false },
    ),
    output: Type.Object({ campaigns: Type.Array(Campaign), nextCursor: Type.Union([Type.String(), Type.Null()]) }),
    annotations: READ_ONLY,
    async run(args, ctx) {
      const page = await store.list(ctx.tenantId, args.limit, args.cursor);
      const summary = pageSummary(page, 'campaign', page.data.map(campaignLine), 'list_campaigns', 'No campaigns.');
      return { summary, result: { campaigns: page.data, nextCursor: page.nextCursor } };
    },
  });

  const createCampaign = defineTool({
    name: 'create_campaign',
    title: 'Create a campaign',
    description:
      'Creates a campaign (a folder of links, e.g. one print run or promotion). The name must be unique in the workspace, case-insensitively ' +
      '(campaign_name_taken otherwise). Returns the campaign with its id, to pass as `campaignId` to create_link, get_analytics or get_funnel.',
    input: CreateCampaignBody,
    output: Type.Object({ campaign: Campaign }),
    annotations: CREATES,
    async run(args, ctx) {
      const campaign = campaignOrRefused(await store.create(ctx.tenantId, args));
      return { summary: `Created campaign "${campaign.name}" (id ${campaign.id}).`, result: { campaign } };
    },
  });

  return [listCampaigns, createCampaign];
}
