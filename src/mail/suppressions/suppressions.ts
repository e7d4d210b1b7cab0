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
