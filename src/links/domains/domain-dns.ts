// The DNS records a workspace publishes for a branded link domain, and the
// check of its verification record. The TXT record proves the workspace holds
// the domain; the CNAME (or, at a zone's apex, A records) sends its visitors
// to the ingress.
import type { Resolver } from 'node:dns/promises';
import { txtRecords } from '../../platform/dns.ts';

export interface DomainDnsRecord {
  /** verification: proves the domain is the workspace's; routing: sends visitors here. */
  record: 'verification' | 'routing';
  type: 'TXT' | 'CNAME' | 'A';
  name: string;
  value: string;
}

/** Where routing records point (LINK_DOMAIN_CNAME_TARGET, LINK_DOMAIN_A_TARGETS). */
export interface RoutingTargets {
  cname: string;
  addresses: readonly string[];
}

export const verificationName = (domain: string): string => `_svc-verify.${domain}`;
export const verificationValue = (token: string): string => `svc-verify=${token}`;

export function domainRecords(domain: { name: string; verification_token: string }, targets: RoutingTargets): DomainDnsRecord[] {
  return [
    { record: 'verification', type: 'TXT', name: verificationName(domain.name), value: verificationValue(domain.verification_token) },
    { record: 'routing', type: 'CNAME', name: domain.name, value: targets.cname },
    ...targets.addresses.map((address) => ({ record: 'routing' as const, type: 'A' as const, name: domain.name, value: address })),
  ];
}

export type VerificationCheck = 'verified' | 'missing' | 'mismatch' | 'lookup_failed';

/** Looks for the domain's verification TXT record. */
export async function checkVerification(resolver: Resolver, domain: { name: string; verification_token: string }): Promise<{ txt: VerificationCheck; detail: string }> {
  const name = verificationName(domain.name);
  const lookup = await txtRecords(resolver, name);
  if ('lookupFailed' in lookup) return { txt: 'lookup_failed', detail: `The DNS lookup of ${name} failed (${lookup.lookupFailed}); try again later.` };
  if ('missing' in lookup) return { txt: 'missing', detail: `No TXT record at ${name}.` };
  const expected = verificationValue(domain.verification_token);
  if (lookup.found.some((value) => value.trim() === expected)) return { txt: 'verified', detail: `The TXT record at ${name} matches.` };
  return { txt: 'mismatch', detail: `The TXT records at ${name} do not hold ${expected}; publish the value under records.` };
}
