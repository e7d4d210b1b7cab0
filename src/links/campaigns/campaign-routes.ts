// REST routes of campaigns (link folders). A link joins a campaign through its campaignId.
import { Type } from '@sinclair/typebox';
import { notFound } from '../../platform/http/errors.ts';
import { addComponents, ref } from '../../platform/http/components.ts';
import { API_BODY_ERRORS, API_ERRORS, errorResponses, withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import { Campaign, CAMPAIGN_COMPONENTS, CampaignList, CreateCampaignBody, ListCampaignsQuery, UpdateCampaignBody } from './campaign-schemas.ts';
import type { CampaignStore } from './campaign-store.ts';
import { campaignOrRefused } from './campaign-refusals.ts';

const IdParams = Type.Object({ id: Type.String({ description: 'Campaign UUID, in any case.' }) });

export async function campaignRoutes(app: App, store: CampaignStore): Promise<void> {
  const tags = ['campaigns'];
  addComponents(app, CAMPAIGN_COMPONENTS);

  app.post('/campaigns', {
    schema: { tags, operationId: 'createCampaign', summary: 'Create a campaign', body: ref(CreateCampaignBody), response: { 201: withRateLimitHeaders(Campaign, 'The new campaign.'), ...errorResponses(...API_BODY_ERRORS, 409) } },
  }, async (request, reply) => reply.status(201).send(campaignOrRefused(await store.create(request.linksAuth.workspaceId, request.body))));

  app.get('/campaigns', {
    schema: { tags, operationId: 'listCampaigns', summary: 'List campaigns with link counts', description: 'Newest first.', querystring: ListCampaignsQuery, response: { 200: withRateLimitHeaders(CampaignList, 'A page of campaigns.'), ...errorResponses(...API_ERRORS) } },
  }, async (request) => ({ object: 'list' as const, ...(await store.list(request.linksAuth.workspaceId, request.query.limit ?? 50, request.query.cursor)) }));

  app.get('/campaigns/:id', {
    schema: { tags, operationId: 'getCampaign', summary: 'Get a campaign', params: IdParams, response: { 200: withRateLimitHeaders(Campaign, 'The campaign.'), ...errorResponses(...API_ERRORS, 404) } },
  }, async (request) => {
    const campaign = await store.get(request.linksAuth.workspaceId, request.params.id);
    if (!campaign) throw notFound('campaign');
    return campaign;
  });

  app.patch('/campaigns/:id', {
    schema: { tags, operationId: 'updateCampaign', summary: 'Rename or describe a campaign', params: IdParams, body: ref(UpdateCampaignBody), response: { 200: withRateLimitHeaders(Campaign, 'The campaign.'), ...errorResponses(...API_BODY_ERRORS, 404, 409) } },
  }, async (request) => {
    const campaign = campaignOrRefused(await store.update(request.linksAuth.workspaceId, request.params.id, request.body));
    if (!campaign) throw notFound('campaign');
    return campaign;
  });
}
