// How the API answers a refused domain change: status, stable code, message.
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { MAX_DOMAINS_PER_WORKSPACE, type LinkDomainRefusal, type LinkDomainResult, type LinkDomainRow } from './link-domains.ts';

export function domainRefusalError(r: LinkDomainRefusal): ApiError {
  switch (r.reason) {
    case 'not_found': return notFound('link domain');
    case 'domain_reserved': return new ApiError(400, r.reason, `${r.name} is the service's own host; it serves every workspace's base-domain links.`, [{ path: '/name', message: 'reserved' }]);
    case 'domain_exists': return new ApiError(409, r.reason, `The workspace already has the domain ${r.name}.`, [{ path: '/name', message: 'already added' }]);
    case 'domain_taken': return new ApiError(409, r.reason, `${r.name} is verified by another workspace.`, [{ path: '/name', message: 'verified by another workspace' }]);
    case 'domain_limit_reached': return new ApiError(409, r.reason, `A workspace may have at most ${MAX_DOMAINS_PER_WORKSPACE} domains; delete one first.`);
    case 'domain_in_use': return new ApiError(409, r.reason, `${r.name} has ${r.activeLinks} active link(s); deactivate them (DELETE /api/v1/links/:id) before deleting the domain.`);
  }
}

/** The domain, or the refusal thrown as the API's answer. */
export function domainOrRefused(result: LinkDomainResult): LinkDomainRow {
  if (!result.ok) throw domainRefusalError(result.refusal);
  return result.row;
}
