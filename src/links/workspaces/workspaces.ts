// Workspaces: the tenant of the link service. Every key, link, campaign and limit belongs to one.
import type { Pool } from '../../platform/postgres/pool.ts';
import { newestFirst } from '../short-links/cursor.ts';
import type { Plan } from './plans.ts';

export interface Workspace {
  id: string;
  name: string;
  plan: Plan;
  createdAt: string;
  updatedAt: string;
}

interface Row {
  id: string;
  name: string;
  plan: Plan;
  created_at: Date;
  updated_at: Date;
}

const toWorkspace = (r: Row): Workspace => ({
  id: r.id,
  name: r.name,
  plan: r.plan,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

export class Workspaces {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  async create(name: string, plan: Plan): Promise<Workspace> {
    const { rows } = await this.pg.query<Row>('INSERT INTO workspaces (name, plan) VALUES ($1, $2) RETURNING *', [name, plan]);
    return toWorkspace(rows[0]!);
  }

  async get(id: string): Promise<Workspace | undefined> {
    const { rows } = await this.pg.query<Row>('SELECT * FROM workspaces WHERE id = $1', [id]);
    return rows[0] && toWorkspace(rows[0]);
  }

  /** A page of workspaces, newest first; `cursor` is the previous page's nextCursor. */
  async list(limit: number, cursor?: string): Promise<{ data: Workspace[]; nextCursor: string | null }> {
    const { rows, nextCursor } = await newestFirst<Row>(this.pg, 'SELECT * FROM workspaces', [], limit, cursor);
    return { data: rows.map(toWorkspace), nextCursor };
  }

  async setPlan(id: string, plan: Plan): Promise<Workspace | undefined> {
    const { rows } = await this.pg.query<Row>('UPDATE workspaces SET plan = $2, updated_at = now() WHERE id = $1 RETURNING *', [id, plan]);
    return rows[0] && toWorkspace(rows[0]);
  }
}
