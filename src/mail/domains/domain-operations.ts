// What a key may do with sending domains, one function per operation, for
// /api/v1/domains and Resend's /domains alike: the same key restrictions, the
// same store, the same DNS check, the same refusals.
import type { Resolver } from 'node:dns/promises';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { MailKeyGrant } from '../accounts/mail-keys.ts';
import { mayUseDomain } from '../auth/permissions.ts';
import { checkDkim, type DnsCheckResult } from './dns-check.ts';
import type { DomainRow, Domains } from './domains.ts';

/** A new domain with its DKIM key pair; 403 for a name the key may not use, 409 when the organization has it. */
export async function createDomain(domains: Domains, grant: MailKeyGrant, name: string, trackingHost: string | null, region?: string): Promise<DomainRow> {
  const lower = name.toLowerCase();
  if (!mayUseDomain(grant, lower)) throw new ApiError(403, 'domain_not_allowed', `This key is restricted to other domains than ${lower}.`);
  const row = await domains.create(grant.organizationId, lower, trackingHost, region);
  if (!row) throw new ApiError(409, 'domain_exists', `The organization already has the domain ${lower}.`);
  return row;
}

/** The domain if the key may see it, else 404. */
export async function visibleDomain(domains: Domains, grant: MailKeyGrant, id: string): Promise<DomainRow> {
  const row = isUuid(id) ? await domains.get(grant.organizationId, id, grant.domains) : undefined;
  if (!row) throw notFound('domain');
  return row;
}

/** Looks the DKIM record up and records the outcome (a failed lookup changes nothing). */
export async function verifyDomain(domains: Domains, resolver: Resolver, row: DomainRow): Promise<{ row: DomainRow; check: DnsCheckResult }> {
  const check = await checkDkim(resolver, row);
  // A record not found fails a once verified domain only after the grace (temporary_failure meanwhile).
  const after = check.dkim === 'lookup_failed' ? row : (check.dkim === 'verified' ? await domains.setStatus(row.id, 'verified') : await domains.recordFailedCheck(row.id))!;
  return { row: after, check };
}

/** Removes a domain the key may see, else 404. */
export async function removeDomain(domains: Domains, grant: MailKeyGrant, id: string): Promise<DomainRow> {
  const row = isUuid(id) ? await domains.delete(grant.organizationId, id, grant.domains) : undefined;
  if (!row) throw notFound('domain');
  return row;
}
