// Which domain a new link goes on: the one it names (a domain of the workspace,
// in any state but deleted, or the base domain's host), else the workspace's
// default domain, else the service's base domain.
import { Type } from '@sinclair/typebox';
import type pg from 'pg';

/** A host name as `domain` takes it: a branded domain's name or the base domain's host (which may be an address). */
export const LinkDomainName = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?\\.?$',
  description: 'The domain of the link: a domain of the workspace (GET /api/v1/link-domains; verified or not: only verified domains redirect), or the base domain\'s host. Left out or null: the workspace\'s default domain, else the base domain. Cannot be changed.',
  examples: ['go.acme.com'],
});

/** A branded domain, or null for the base domain. */
export type LinkDomainChoice = { id: string; name: string } | null;

/**
 * The domain for a new link, or undefined when `requested` is not a domain of the workspace. The
 * domain's row is locked (FOR SHARE) until the link is written, so the domain cannot be deleted
 * in between.
 */
export async function domainOfLink(client: Pick<pg.PoolClient, 'query'>, workspaceId: string, requested: string | null | undefined, baseHost: string | undefined): Promise<LinkDomainChoice | undefined> {
  const name = requested?.toLowerCase().replace(/\.$/, '');
  if (name !== undefined && name === baseHost) return null;
  const { rows } = name === undefined
    ? await client.query<{ id: string; name: string }>('SELECT id, name FROM link_domains WHERE workspace_id = $1 AND is_default AND deleted_at IS NULL FOR SHARE', [workspaceId])
    : await client.query<{ id: string; name: string }>('SELECT id, name FROM link_domains WHERE workspace_id = $1 AND name = $2 AND deleted_at IS NULL FOR SHARE', [workspaceId, name]);
  if (rows[0]) return rows[0];
  return name === undefined ? null : undefined;
}

/**
 * A `domain` filter as link queries take it: the branded domain's name, null for the base domain
 * (given its host), undefined for no filter.
 */
export function domainFilter(raw: string | undefined, baseHost: string | undefined): string | null | undefined {
  if (raw === undefined) return undefined;
  const name = domainName(raw);
  return name === baseHost ? null : name;
}

/** A domain as given in a filter, as answers name it back: lower case, without a trailing dot. */
export const domainName = (raw: string): string => raw.toLowerCase().replace(/\.$/, '');

/** The `domain` query parameter of analytics and exports. */
export const DomainFilterParam = Type.String({
  minLength: 1,
  maxLength: 253,
  description: 'Only links on this domain: a branded domain\'s name, or the base domain\'s host (links on no branded domain).',
});
