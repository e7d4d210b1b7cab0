// An organization's suppression list: lower-cased addresses that no message is
// sent to, with why (manual, bounce, complaint, unsubscribe).
import type { Pool } from '../../platform/postgres/pool.ts';

export const SUPPRESSION_REASONS = ['manual', 'bounce', 'complaint', 'unsubscribe'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

export interface Suppression {
  object: 'suppression';
  id: string;
  email: string;
  reason: SuppressionReason;
  created_at: string;
}

export interface SuppressionRow {
  id: string;
  organization_id: string;
  email: string;
  reason: SuppressionReason;
  created_at: Date;
}

export const toSuppression = (r: SuppressionRow): Suppression => ({ object: 'suppression', id: r.id, email: r.email, reason: r.reason, created_at: r.created_at.toISOString() });

export class Suppressions {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  /** Adds the address; an address already on the list keeps its row (created: false). */
  async add(organizationId: string, email: string, reason: SuppressionReason): Promise<{ row: SuppressionRow; created: boolean }> {
    const inserted = await this.pg.query<SuppressionRow>(
      'INSERT INTO mail_suppressions (organization_id, email, reason) VALUES ($1, $2, $3) ON CONFLICT (organization_id, email) DO NOTHING RETURNING *',
      [organizationId, email, reason],
    );
    if (inserted.rows[0]) return { row: inserted.rows[0], created: true };
    return { row: (await this.find(organizationId, email))!, created: false };
  }

  /**
   * Adds the addresses (lower-cased keys) in one statement: all or none. The entries in the order
   * given, once each; an address already listed keeps its entry.
   */
  async addAll(organizationId: string, emails: readonly string[], reason: SuppressionReason): Promise<SuppressionRow[]> {
    const { rows } = await this.pg.query<SuppressionRow>(
      `WITH input AS (SELECT e AS email, min(n) AS n FROM unnest($2::text[]) WITH ORDINALITY AS x(e, n) GROUP BY e),
            added AS (INSERT INTO mail_suppressions (organization_id, email, reason) SELECT $1, email, $3 FROM input
                      ON CONFLICT (organization_id, email) DO NOTHING RETURNING *)
       SELECT coalesce(a.id, s.id) AS id, coalesce(a.organization_id, s.organization_id) AS organization_id, i.email,
              coalesce(a.reason, s.reason) AS reason, coalesce(a.created_at, s.created_at) AS created_at
         FROM input i LEFT JOIN added a ON a.email = i.email
         LEFT JOIN mail_suppressions s ON s.organization_id = $1 AND s.email = i.email
        ORDER BY i.n`,
      [organizationId, emails, reason],
    );
    return rows;
  }

  /** Removes, in one statement, the entries named by address (lower-cased) or id: those removed, in the order named. */
  async removeAll(organizationId: string, emails: readonly string[], ids: readonly string[]): Promise<SuppressionRow[]> {
    const { rows } = await this.pg.query<SuppressionRow>(
      'DELETE FROM mail_suppressions WHERE organization_id = $1 AND (email = ANY($2::text[]) OR id = ANY($3::uuid[])) RETURNING *',
      [organizationId, emails, ids],
    );
    const order = new Map([...emails, ...ids].map((name, i) => [name, i]));
    const at = (r: SuppressionRow) => Math.min(order.get(r.email) ?? Infinity, order.get(r.id) ?? Infinity);
    return rows.sort((a, b) => at(a) - at(b));
  }

  /** By id or by address. */
  async find(organizationId: string, idOrEmail: string): Promise<SuppressionRow | undefined> {
    const byEmail = idOrEmail.includes('@');
    const { rows } = await this.pg.query<SuppressionRow>(
      `SELECT * FROM mail_suppressions WHERE organization_id = $1 AND ${byEmail ? 'email = lower($2)' : 'id = $2::uuid'}`,
      [organizationId, idOrEmail],
    );
    return rows[0];
  }

  async remove(organizationId: string, id: string): Promise<SuppressionRow | undefined> {
    const { rows } = await this.pg.query<SuppressionRow>('DELETE FROM mail_suppressions WHERE organization_id = $1 AND id = $2 RETURNING *', [organizationId, id]);
    return rows[0];
  }

  listQuery(organizationId: string): { select: string; params: unknown[] } {
    return { select: 'SELECT * FROM mail_suppressions WHERE organization_id = $1', params: [organizationId] };
  }
}
