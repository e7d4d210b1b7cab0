// How the API answers a refused link change, the same from REST, bulk and MCP:
// the status, code, message and the field it names.
import { ApiError, notFound } from '../../platform/http/errors.ts';
import type { LinkRefusal, LinkResult } from './link-store.ts';

export function refusalError(r: LinkRefusal): ApiError {
  switch (r.reason) {
    case 'not_found': return notFound('link');
    case 'invalid_url': return new ApiError(400, r.reason, `${r.field} ${r.problem}.`, [{ path: `/${r.field}`, message: r.problem }]);
    case 'expiry_in_past': return new ApiError(400, r.reason, 'expiresAt must be in the future.', [{ path: '/expiresAt', message: 'must be in the future' }]);
    case 'valid_from_after_expiry': return new ApiError(400, r.reason, 'validFrom must be before expiresAt.', [{ path: '/validFrom', message: 'must be before expiresAt' }]);
    case 'invalid_country': return new ApiError(400, r.reason, `geo: "${r.code}" is not an ISO 3166-1 alpha-2 country code.`, [{ path: `/geo/${r.code}`, message: 'not a country code' }]);
    case 'invalid_test_variants': return new ApiError(400, r.reason, `testVariants: the percents must sum to 100, not ${r.total}.`, [{ path: '/testVariants', message: 'percents must sum to 100' }]);
    case 'invalid_pixel_id': return new ApiError(400, r.reason, `pixels[${r.index}].pixelId ${r.problem}.`, [{ path: `/pixels/${r.index}/pixelId`, message: r.problem }]);
    case 'campaign_not_found': return new ApiError(400, r.reason, 'campaignId is not a campaign of this workspace.', [{ path: '/campaignId', message: 'no such campaign' }]);
    case 'short_id_reserved': return new ApiError(400, r.reason, `"${r.shortId}" is reserved by the service.`, [{ path: '/shortId', message: 'reserved' }]);
    case 'short_id_taken': return new ApiError(409, r.reason, `The short ID "${r.shortId}" is already in use${r.domain ? ` on ${r.domain}` : ''}.`, [{ path: '/shortId', message: 'already in use' }]);
    case 'domain_not_found': return new ApiError(400, r.reason, `${r.domain} is not a domain of this workspace (add it with POST /api/v1/link-domains).`, [{ path: '/domain', message: 'no such domain' }]);
    case 'scan_count_unavailable':
      return new ApiError(503, r.reason, 'The link\'s scans so far cannot be counted right now, so its scan limit cannot be set; try again shortly.', undefined, { 'retry-after': '5' });
  }
}

/** The result's value, or its refusal thrown as the API's answer. */
export function orRefused<T>(result: LinkResult<T>): T {
  if (!result.ok) throw refusalError(result.refusal);
  return result;
}
