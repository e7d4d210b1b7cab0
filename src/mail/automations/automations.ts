// Automations as stored (migration 018): a trigger event name, a From, and steps
// that each send a published template version, optionally after a delay. The
// versions are pinned when the automation is written (like a broadcast's), so a
// later publish changes nothing already decided. Runs are written by POST /events
// (trigger-events.ts) and moved on by the automation actor (run-actor.ts).
import type { Pool } from '../../platform/postgres/pool.ts';
import type { DomainScope } from '../domains/domains.ts';

export interface AutomationStep {
  template_id: string;
  template_slug: string;
  version: number;
  delay_minutes: number;
}

export interface NewAutomation {
  name: string;
  trigger_event: string;
  from_address: string;
  from_domain: string;
  reply_to: string | null;
  steps: AutomationStep[];
  enabled: boolean;
}

export interface AutomationRow extends NewAutomation {
  id: string;
  organization_id: string;
  created_at: Date;
  updated_at: Date;
}

export const RUN_STATES = ['running', 'waiting', 'completed', 'canceled'] as const;
export type RunState = (typeof RUN_STATES)[number];

export interface RunRow {
  id: string;
  organization_id: string;
  automation_id: string;
  contact_id: string;
  event_id: string;
  steps: AutomationStep[];
  state: RunState;
  step: number;
  next_at: Date | null;
  reason: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

export const toAutomation = (a: AutomationRow) => ({
  object: 'automation' as const,
  id: a.id,
  name: a.name,
  trigger: { event: a.trigger_event },
  from: a.from_address,
  reply_to: a.reply_to,
  steps: a.steps.map((s) => ({ template: { id: s.template_id, slug: s.template_slug, version: s.version }, delay_minutes: s.delay_minutes })),
  enabled: a.enabled,
  created_at: a.created_at.toISOString(),
  updated_at: a.updated_at.toISOString(),
});

export const toRun = (r: RunRow) => ({
  object: 'automation_run' as const,
  id: r.id,
  automation_id: r.automation_id,
  contact_id: r.contact_id,
  event_id: r.event_id,
  state: r.state,
  step: r.step,
  next_step_at: r.state === 'waiting' || r.state === 'running' ? iso(r.next_at) : null,
  reason: r.reason,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
  finished_at: iso(r.finished_at),
});

export class Automations {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  async create(organizationId: string, a: NewAutomation): Promise<AutomationRow> {
    const { rows } = await this.pg.query<AutomationRow>(
      `INSERT INTO mail_automations (organization_id, name, trigger_event, from_address, from_domain, reply_to, steps, enabled)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [organizationId, a.name, a.trigger_event, a.from_address, a.from_domain, a.reply_to, JSON.stringify(a.steps), a.enabled],
    );
    return rows[0]!;
  }

  /** The automation, if the organization has it (and the key may see its From domain). */
  async get(organizationId: string, id: string, scope: DomainScope): Promise<AutomationRow | undefined> {
    const { rows } = await this.pg.query<AutomationRow>(
      'SELECT * FROM mail_automations WHERE organization_id = $1 AND id = $2 AND ($3::text[] IS NULL OR from_domain = ANY($3))',
      [organizationId, id, scope],
    );
    return rows[0];
  }

  /** Replaces the fields given; runs already started go on with the steps they started with. */
  async update(a: AutomationRow, change: Partial<NewAutomation>): Promise<AutomationRow> {
    const next = { ...a, ...change };
    const { rows } = await this.pg.query<AutomationRow>(
      `UPDATE mail_automations SET name = $2, trigger_event = $3, from_address = $4, from_domain = $5, reply_to = $6, steps = $7, enabled = $8, updated_at = now()
        WHERE id = $1 RETURNING *`,
      [a.id, next.name, next.trigger_event, next.from_address, next.from_domain, next.reply_to, JSON.stringify(next.steps), next.enabled],
    );
    return rows[0]!;
  }

  /** Deletes the automation and its runs; a run between steps stops there. */
  async delete(a: AutomationRow): Promise<void> {
    await this.pg.query('DELETE FROM mail_automations WHERE id = $1', [a.id]);
  }

  listQuery(organizationId: string, scope: DomainScope): { select: string; params: unknown[] } {
    return { select: 'SELECT * FROM mail_automations WHERE organization_id = $1 AND ($2::text[] IS NULL OR from_domain = ANY($2))', params: [organizationId, scope] };
  }

  runsQuery(automationId: string, state: RunState | undefined): { select: string; params: unknown[] } {
    return { select: 'SELECT * FROM mail_automation_runs WHERE automation_id = $1 AND ($2::text IS NULL OR state = $2)', params: [automationId, state ?? null] };
  }
}
