// JSON shapes of /api/v1/link-domains (TypeBox: they validate requests and make the OpenAPI document).
import { Type, type Static } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { DomainDnsRecord, RoutingTargets } from './domain-dns.ts';
import { domainRecords } from './domain-dns.ts';
import type { LinkDomainRow } from './link-domains.ts';

/** A DNS host name of two or more labels, stored lower-case. */
export const DomainName = Type.String({
  maxLength: 253,
  pattern: '^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}\\.?$',
  description: 'A host name of two or more labels, such as go.acme.com; stored lower-case.',
  examples: ['go.acme.com'],
});

export const LINK_DOMAIN_STATUSES = ['pending', 'verified', 'failed'] as const;

const DnsRecord = Type.Object(
  {
    record: StringEnum(['verification', 'routing'] as const, { description: 'verification: the TXT record that proves the domain is yours; routing: the CNAME (or, at a zone apex where CNAME is not allowed, the A records) that sends visitors to the service.' }),
    type: StringEnum(['TXT', 'CNAME', 'A'] as const),
    name: Type.String(),
    value: Type.String(),
  },
  { $id: 'LinkDomainDnsRecord', title: 'LinkDomainDnsRecord' },
);

export const LinkDomain = Type.Object(
  {
    object: Type.Literal('link_domain'),
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    status: StringEnum(LINK_DOMAIN_STATUSES, {
      description: 'pending until its TXT record is found (or an operator verifies it); failed after a check that did not find it. Links may be created on a domain in any state; only a verified domain serves redirects.',
    }),
    isDefault: Type.Boolean({ description: 'New links without `domain` go on the workspace\'s default domain (else on the service\'s base domain).' }),
    records: Type.Array(ref(DnsRecord), { description: 'The DNS records to publish.' }),
    rootUrl: Type.Union([Type.String(), Type.Null()], { description: 'Where GET / on the domain redirects (302, recorded as an orphan visit of type base_url); null: 404 as before.' }),
    notFoundUrl: Type.Union([Type.String(), Type.Null()], { description: 'Where a short ID no link has on the domain redirects (302, recorded as an orphan visit of type invalid_short_url); null: 404 as before.' }),
    verifiedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    lastCheckedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'LinkDomain', title: 'LinkDomain' },
);
export type LinkDomainType = Static<typeof LinkDomain>;

export const LinkDomainList = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(ref(LinkDomain)) },
  { $id: 'LinkDomainList', title: 'LinkDomainList', description: 'The workspace\'s domains, the default first, then by name.' },
);

export const LinkDomainCheck = Type.Object(
  {
    domain: ref(LinkDomain),
    txt: StringEnum(['verified', 'missing', 'mismatch', 'lookup_failed'] as const, { description: 'What the lookup of the verification record found; lookup_failed (DNS did not answer) changes nothing.' }),
    detail: Type.String(),
  },
  { $id: 'LinkDomainCheck', title: 'LinkDomainCheck' },
);

export const CreateLinkDomainBody = Type.Object(
  { name: DomainName, isDefault: Type.Optional(Type.Boolean({ default: false, description: 'Make it the workspace\'s default domain (the previous default stops being it).' })) },
  { $id: 'CreateLinkDomain', title: 'CreateLinkDomain', additionalProperties: false },
);

/** A fallback URL: checked like a link's destination (absolute http(s), no credentials, not this service's own short links). */
const FallbackUrl = (description: string) => Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Null()], { description });

export const UpdateLinkDomainBody = Type.Object(
  {
    isDefault: Type.Optional(Type.Boolean({ description: 'true: the workspace\'s default domain; false: new links go on the service\'s base domain again.' })),
    rootUrl: Type.Optional(FallbackUrl('Where GET / on the domain redirects; null clears it (404 again). Checked like a link\'s destination (400 invalid_url).')),
    notFoundUrl: Type.Optional(FallbackUrl('Where an unknown short ID on the domain redirects; null clears it (404 again). Checked like a link\'s destination (400 invalid_url).')),
  },
  {
    $id: 'UpdateLinkDomain', title: 'UpdateLinkDomain', additionalProperties: false, minProperties: 1,
    description: 'Changes only the fields it names (at least one).',
    examples: [{ rootUrl: 'https://acme.com/', notFoundUrl: 'https://acme.com/404' }],
  },
);

export const LINK_DOMAIN_COMPONENTS = [DnsRecord, LinkDomain, LinkDomainList, LinkDomainCheck, CreateLinkDomainBody, UpdateLinkDomainBody];

const statusOf = (row: LinkDomainRow): LinkDomainType['status'] => (row.verified_at ? 'verified' : row.last_checked_at ? 'failed' : 'pending');

export function toLinkDomain(row: LinkDomainRow, targets: RoutingTargets): LinkDomainType {
  return {
    object: 'link_domain',
    id: row.id,
    name: row.name,
    status: statusOf(row),
    isDefault: row.is_default,
    records: domainRecords(row, targets) satisfies DomainDnsRecord[],
    rootUrl: row.root_url,
    notFoundUrl: row.not_found_url,
    verifiedAt: row.verified_at?.toISOString() ?? null,
    lastCheckedAt: row.last_checked_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
