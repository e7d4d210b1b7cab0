// Branded link domains of a workspace, in Postgres. A store that answers with
// results: a refused change changes nothing and says why (LinkDomainRefusal);
// the routes decide the answer (domain-refusals.ts).
import { randomBytes } from 'node:crypto';
import type { Pool } from '../../platform/postgres/pool.ts';
import { withTransaction } from '../../platform/postgres/pool.ts';
import { isUuid } from '../../platform/http/validation.ts';

/** Domains a workspace may have (deleted ones not counted). */
export const MAX_DOMAINS_PER_WORKSPACE = 100;

export interface LinkDomainRow {
  id: string;
  workspace_id: string;
  name: string;
  verification_token: string;
  is_default: boolean;
  verified_at: Date | null;
  last_checked_at: Date | null;
  /** Where GET / on the domain redirects; null: 404. */
  root_url: string | null;
  /** Where an unknown short ID on the domain redirects; null: 404. */
  not_found_url: string | null;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type LinkDomainRefusal =
  | { reason: 'not_found' }
  | { reason: 'domain_reserved'; name: string }
  | { reason: 'domain_exists'; name: string }
  | { reason: 'domain_taken'; name: string }
  | { reason: 'domain_limit_reached' }
  | { reason: 'domain_in_use'; name: string; activeLinks: number };

export type LinkDomainResult = { ok: true; row: LinkDomainRow } | { ok: false; refusal: LinkDomainRefusal };

const refuse = (refusal: LinkDomainRefusal): LinkDomainResult => ({ ok: false, refusal });

/** Whether a Postgres error is a unique violation of this index. */
const violates = (err: unknown, index: string) => (err as { code?: string; constraint?: string }).code === '23505' && (err as { constraint?: string }).constraint === index;

export class LinkDomains {
  private readonly pg: Pool;
  /** Names the service serves itself (the base domain's hosts), which no workspace may add. */
  private readonly isBaseHost: (name: string) => boolean;

  constructor(
    pg: Pool,
    isBaseHost: (name: string) => boolean,
  ) {
    this.pg = pg;
    this.isBaseHost = isBaseHost;
  }

  /** Adds a domain, pending until verified; the default of the workspace when asked. */
  async create(workspaceId: string, rawName: string, isDefault: boolean): Promise<LinkDomainResult> {
    const name = rawName.toLowerCase().replace(/\.$/, '');
    if (this.isBaseHost(name)) return refuse({ reason: 'domain_reserved', name });
    try {
      return await withTransaction(this.pg, async (client) => {
        // One writer per workspace at a time, so the count below holds.
        await client.query('SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
        const taken = await client.query('SELECT 1 FROM link_domains WHERE name = $1 AND verified_at IS NOT NULL AND deleted_at IS NULL AND workspace_id <> $2', [name, workspaceId]);
        if (taken.rowCount) return refuse({ reason: 'domain_taken', name });
        const { rows: [count] } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM link_domains WHERE workspace_id = $1 AND deleted_at IS NULL', [workspaceId]);
        if (count!.n >= MAX_DOMAINS_PER_WORKSPACE) return refuse({ reason: 'domain_limit_reached' });
        if (isDefault) await client.query('UPDATE link_domains SET is_default = false, updated_at = now() WHERE workspace_id = $1 AND is_default AND deleted_at IS NULL', [workspaceId]);
        const { rows } = await client.query<LinkDomainRow>(
          `INSERT INTO link_domains (workspace_id, name, verification_token, is_default) VALUES ($1, $2, $3, $4)
           ON CONFLICT (workspace_id, name) WHERE deleted_at IS NULL DO NOTHING RETURNING *`,
          [workspaceId, name, randomBytes(18).toString('base64url'), isDefault],
        );
        return rows[0] ? { ok: true as const, row: rows[0] } : refuse({ reason: 'domain_exists', name });
      });
    } catch (err) {
      if (violates(err, 'link_domains_workspace_name')) return refuse({ reason: 'domain_exists', name });
      throw err;
    }
  }

  /** The workspace's domain (not deleted). */
  async get(workspaceId: string, id: string): Promise<LinkDomainRow | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.pg.query<LinkDomainRow>('SELECT * FROM link_domains WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL', [id, workspaceId]);
    return rows[0];
  }

  /** Any workspace's domain (not deleted), for operators. */
  async getAny(id: string): Promise<LinkDomainRow | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.pg.query<LinkDomainRow>('SELECT * FROM link_domains WHERE id = $1 AND deleted_at IS NULL', [id]);
    return rows[0];
  }

  /** The workspace's domains, the default first, then by name. */
  async list(workspaceId: string): Promise<LinkDomainRow[]> {
    const { rows } = await this.pg.query<LinkDomainRow>(
      'SELECT * FROM link_domains WHERE workspace_id = $1 AND deleted_at IS NULL ORDER BY is_default DESC, name COLLATE "C", id',
      [workspaceId],
    );
    return rows;
  }

  /**
   * Sets what a PATCH names of the domain's default flag and fallback URLs (each undefined: kept; a
   * URL null: cleared), in one transaction. The URLs are checked by the caller.
   */
  async update(workspaceId: string, id: string, change: { isDefault?: boolean; rootUrl?: string | null; notFoundUrl?: string | null }): Promise<LinkDomainResult> {
    if (!isUuid(id)) return refuse({ reason: 'not_found' });
    return withTransaction(this.pg, async (client) => {
      await client.query('SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
      if (change.isDefault) await client.query('UPDATE link_domains SET is_default = false, updated_at = now() WHERE workspace_id = $1 AND is_default AND deleted_at IS NULL AND id <> $2', [workspaceId, id]);
      // $3/$5/$7: whether the field was named; unnamed fields keep their value.
      const { rows } = await client.query<LinkDomainRow>(
        `UPDATE link_domains
            SET is_default = CASE WHEN $3 THEN $4::boolean ELSE is_default END,
                root_url = CASE WHEN $5 THEN $6::text ELSE root_url END,
                not_found_url = CASE WHEN $7 THEN $8::text ELSE not_found_url END,
                updated_at = CASE WHEN ($3 AND is_default IS DISTINCT FROM $4::boolean) OR ($5 AND root_url IS DISTINCT FROM $6::text) OR ($7 AND not_found_url IS DISTINCT FROM $8::text)
                                  THEN date_trunc('milliseconds', now()) ELSE updated_at END
          WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL RETURNING *`,
        [id, workspaceId, change.isDefault !== undefined, change.isDefault ?? false, change.rootUrl !== undefined, change.rootUrl ?? null, change.notFoundUrl !== undefined, change.notFoundUrl ?? null],
      );
      return rows[0] ? { ok: true as const, row: rows[0] } : refuse({ reason: 'not_found' });
    });
  }

  /**
   * Marks the domain verified (a DNS check found its record, or an operator says so). Refused when
   * another workspace verified the same name first. Verifying a verified domain changes nothing.
   */
  async markVerified(id: string): Promise<LinkDomainResult> {
    if (!isUuid(id)) return refuse({ reason: 'not_found' });
    try {
      const { rows } = await this.pg.query<LinkDomainRow>(
        `UPDATE link_domains SET verified_at = coalesce(verified_at, date_trunc('milliseconds', now())), last_checked_at = now(), updated_at = now()
          WHERE id = $1 AND deleted_at IS NULL RETURNING *`,
        [id],
      );
      return rows[0] ? { ok: true, row: rows[0] } : refuse({ reason: 'not_found' });
    } catch (err) {
      if (!violates(err, 'link_domains_verified_name')) throw err;
      const { rows } = await this.pg.query<{ name: string }>('SELECT name FROM link_domains WHERE id = $1', [id]);
      return refuse({ reason: 'domain_taken', name: rows[0]?.name ?? '' });
    }
  }

  /**
   * Records a check that did not find the record. A verified domain stays verified: its TXT record
   * may be removed once verified, and its printed links must keep working.
   */
  async recordFailedCheck(id: string): Promise<LinkDomainRow | undefined> {
    const { rows } = await this.pg.query<LinkDomainRow>('UPDATE link_domains SET last_checked_at = now(), updated_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING *', [id]);
    return rows[0];
  }

  /**
   * Deletes the domain, refused while active links use it. Its deactivated links keep it (the row
   * stays, marked deleted); the name may be added again, as a new domain.
   */
  async delete(workspaceId: string, id: string): Promise<LinkDomainResult> {
    if (!isUuid(id)) return refuse({ reason: 'not_found' });
    return withTransaction(this.pg, async (client) => {
      const { rows: [domain] } = await client.query<LinkDomainRow>('SELECT * FROM link_domains WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL FOR UPDATE', [id, workspaceId]);
      if (!domain) return refuse({ reason: 'not_found' });
      // Link creation locks the domain row (FOR SHARE), so no link arrives between this count and the delete.
      const { rows: [active] } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM links WHERE domain_id = $1 AND is_active', [id]);
      if (active!.n > 0) return refuse({ reason: 'domain_in_use', name: domain.name, activeLinks: active!.n });
      const { rows } = await client.query<LinkDomainRow>(
        `UPDATE link_domains SET deleted_at = now(), is_default = false, updated_at = now() WHERE id = $1 RETURNING *`,
        [id],
      );
      return { ok: true as const, row: rows[0]! };
    });
  }
}
