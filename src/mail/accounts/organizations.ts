// Organizations: the tenant of the mail product. Every key, domain, contact and message belongs to one.
import type { Pool } from '../../platform/postgres/pool.ts';
import { page, type Page } from '../http/pagination.ts';
import { effectiveDailySendCap, type Plan } from './plans.ts';

export interface Organization {
  object: 'organization';
  id: string;
  name: string;
  plan: Plan;
  /** What the operator set (null: the plan's default). */
  daily_send_cap: number | null;
  /** What applies: emails per UTC day, null for no cap. */
  effective_daily_send_cap: number | null;
  created_at: string;
  updated_at: string;
}

interface Row {
  id: string;
  name: string;
  plan: Plan;
  daily_send_cap: number | null;
  created_at: Date;
  updated_at: Date;
}

const toOrganization = (r: Row, defaultCap: number): Organization => ({
  object: 'organization',
  id: r.id,
  name: r.name,
  plan: r.plan,
  daily_send_cap: r.daily_send_cap,
  effective_daily_send_cap: effectiveDailySendCap(r.plan, r.daily_send_cap, defaultCap),
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

export interface OrganizationChange {
  plan?: Plan;
  /** null: back to the plan's default. */
  daily_send_cap?: number | null;
}

export class Organizations {
  private readonly pg: Pool;
  private readonly defaultCap: number;

  /** `defaultCap`: the cap of a plan without a ceiling when the organization's own is blank (ORG_DAILY_SEND_CAP). */
  constructor(pg: Pool, defaultCap: number) {
    this.pg = pg;
    this.defaultCap = defaultCap;
  }

  private readonly toOrganization = (r: Row): Organization => toOrganization(r, this.defaultCap);

  async create(name: string, plan: Plan, dailySendCap: number | null = null): Promise<Organization> {
    const { rows } = await this.pg.query<Row>('INSERT INTO mail_organizations (name, plan, daily_send_cap) VALUES ($1, $2, $3) RETURNING *', [name, plan, dailySendCap]);
    return this.toOrganization(rows[0]!);
  }

  async get(id: string): Promise<Organization | undefined> {
    const { rows } = await this.pg.query<Row>('SELECT * FROM mail_organizations WHERE id = $1', [id]);
    return rows[0] && this.toOrganization(rows[0]);
  }

  /** A page of organizations, newest first (pagination.ts). */
  async list(limit?: number, cursor?: string): Promise<Page<Organization>> {
    return page(this.pg, { select: 'SELECT * FROM mail_organizations', params: [], limit, cursor }, this.toOrganization);
  }

  async update(id: string, change: OrganizationChange): Promise<Organization | undefined> {
    const { rows } = await this.pg.query<Row>(
      `UPDATE mail_organizations
          SET plan = coalesce($2, plan),
              daily_send_cap = CASE WHEN $3 THEN $4::integer ELSE daily_send_cap END,
              updated_at = now()
        WHERE id = $1 RETURNING *`,
      [id, change.plan ?? null, change.daily_send_cap !== undefined, change.daily_send_cap ?? null],
    );
    return rows[0] && this.toOrganization(rows[0]);
  }
}
