// MCP tools over campaigns (link folders): list_campaigns and create_campaign,
// through the CampaignStore that the REST routes use.
import { z } from 'zod';
import { compileBodyValidator } from '../../platform/http/validation.ts';
import { CreateCampaignBody, type CampaignType } from '../campaigns/campaign-schemas.ts';
import type { CampaignStore } from '../campaigns/campaign-store.ts';
import { CREATES, defineTool, READ_ONLY, throwIfInvalid } from './tool.ts';
import { Campaign, pageSummary } from './tool-schemas.ts';

const checkCreateCampaign = compileBodyValidator(CreateCampaignBody);

const campaignLine = (c: CampaignType): string => `- ${c.name} (id ${c.id}): ${c.linkCount} link${c.linkCount === 1 ? '' : 's'}, ${c.activeLinkCount} active`;

export function campaignTools(store: CampaignStore) {
  const listCampaigns = defineTool({
    name: 'list_campaigns',
    title: 'List campaigns',
    description:
      'Lists the campaigns (link folders) of the workspace, newest first, each with its id, name, description and link counts (all links and active ones). ' +
      'A link joins a campaign through create_link `campaignId`. Paginated like list_links: pass `nextCursor` back as `cursor`.',
    input: z.strictObject({
      limit: z.number().int().min(1).max(100).default(50).describe('Campaigns per page, 1 to 100; default 50.'),
      cursor: z.string().min(1).max(500).optional().describe('nextCursor of the previous page, unchanged.'),
    }),
    output: z.object({ campaigns: z.array(Campaign), nextCursor: z.string().nullable() }),
    annotations: READ_ONLY,
    async run(args, ctx) {
      const page = await store.list(ctx.workspaceId, args.limit, args.cursor);
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
    input: z.strictObject({
      name: z.string().min(1).max(120).regex(/\S/, 'must not be blank').describe('1 to 120 characters; stored trimmed.'),
      description: z.string().max(1000).optional().describe('Up to 1000 characters.'),
    }),
    output: z.object({ campaign: Campaign }),
    annotations: CREATES,
    async run(args, ctx) {
      const input = { name: args.name, ...(args.description !== undefined ? { description: args.description } : {}) };
      throwIfInvalid(checkCreateCampaign(input));
      const campaign = await store.create(ctx.workspaceId, input);
      return { summary: `Created campaign "${campaign.name}" (id ${campaign.id}).`, result: { campaign } };
    },
  });

  return [listCampaigns, createCampaign];
}
