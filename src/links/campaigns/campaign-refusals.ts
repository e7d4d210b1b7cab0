// How the API answers a refused campaign change, the same from REST and MCP.
import { ApiError } from '../../platform/http/errors.ts';
import type { CampaignRefusal, CampaignResult } from './campaign-store.ts';

export function campaignRefusalError(r: CampaignRefusal): ApiError {
  switch (r.reason) {
    case 'campaign_name_taken': return new ApiError(409, r.reason, `A campaign named "${r.name}" already exists.`, [{ path: '/name', message: 'already in use' }]);
  }
}

/** The campaign, or its refusal thrown as the API's answer. */
export function campaignOrRefused<T>(result: CampaignResult<T>): T {
  if (!result.ok) throw campaignRefusalError(result.refusal);
  return result.campaign;
}
