// Trigger events: POST /events, which starts automations (in code "trigger events",
// since "events" alone are mail events; the spec's Events "Inbound", Limits), in one transaction:
//   1. the enabled automations its name triggers (for a domain-restricted key, those
//      sending from its domains);
//   2. its contact: found by id or address; an unknown address is created only when an
//      automation matched (an event that starts nothing creates nothing); an unsubscribed
//      contact starts nothing;
//   3. the organization's quotas of the UTC day: a new contact takes one of 1,000, each
//      run one of 5,000; taken under the quota row's lock, so concurrent events at the
//      edge are admitted exactly; over either, the event is refused and rolled back
//      whole (no contact, no run, no quota spent: nothing partly applied);
//   4. a run per automation (due at once, or after its first step's delay), the event,
//      and their records for the data topics.
// Events that match no automation, and contacts that already exist, take no quota.
// A refused event is a TriggerEventRefusal; trigger-event-routes.ts decides the answer (404, 429).
import type { PoolClient } from 'pg';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import type { AutomationStep } from './automations.ts';
import { recordInboundEvent, recordRunChanges, type AutomationData } from './automation-data.ts';
import { contactOfAddressCte } from '../audience/contacts.ts';

/** Spec, Limits: per organization and UTC day. */
export const NEW_CONTACTS_PER_DAY = 1000;
export const RUNS_PER_DAY = 5000;

export interface TriggerEvent {
  organizationId: string;
  name: string;
  /** Exactly one of email and contactId. */
  email: string | null;
  contactId: string | null;
  properties: Record<string, unknown>;
  /** A domain-restricted key's domains: it starts only the automations sending from them (null: any). */
  scope: string[] | null;
}

export interface AcceptedEvent {
  id: string;
  contact_id: string | null;
  contact_created: boolean;
  run_ids: string[];
}

/** Why an event was refused (and nothing of it applied); `resets` is when a spent quota renews. */
export type TriggerEventRefusal =
  | { reason: 'contact_not_found' }
  | { reason: 'contact_quota_exceeded' | 'run_quota_exceeded'; resets: string };

export type TriggerEventResult = { ok: true; event: AcceptedEvent } | { ok: false; refusal: TriggerEventRefusal };

/** Thrown inside the event's transaction so that it rolls back; accept() returns its refusal. */
class Refused extends Error {
  readonly refusal: TriggerEventRefusal;

  constructor(refusal: TriggerEventRefusal) {
    super(refusal.reason);
    this.refusal = refusal;
  }
}

/** The UTC day of `at`, as Postgres reads a date. */
const utcDay = (at: Date) => at.toISOString().slice(0, 10);

export class TriggerEvents {
  private readonly pg: Pool;
  private readonly data: AutomationData;
  /** The length of a minute of a step's delay (MAIL_AUTOMATION_MINUTE_MS). */
  private readonly minuteMs: number;

  constructor(
    pg: Pool,
    data: AutomationData,
    minuteMs: number,
  ) {
    this.pg = pg;
    this.data = data;
    this.minuteMs = minuteMs;
  }

  /** Accepts the event (or refuses it, changing nothing); `now` (this process's clock) names the quota's UTC day. */
  async accept(e: TriggerEvent, now = new Date()): Promise<TriggerEventResult> {
    try {
      return { ok: true, event: await this.apply(e, now) };
    } catch (err) {
      if (err instanceof Refused) return { ok: false, refusal: err.refusal };
      throw err;
    }
  }

  private async apply(e: TriggerEvent, now: Date): Promise<AcceptedEvent> {
    const { accepted, eventId, changeIds } = await withTransaction(this.pg, async (db) => {
      const { rows: triggered } = await db.query<{ id: string; steps: AutomationStep[] }>(
        `SELECT id, steps FROM mail_automations WHERE organization_id = $1 AND trigger_event = $2 AND enabled AND ($3::text[] IS NULL OR from_domain = ANY($3))
          ORDER BY created_at, id`,
        [e.organizationId, e.name, e.scope],
      );
      const known = await this.knownContact(db, e);
      // An unsubscribed contact starts nothing (and so takes no quota).
      const automations = known?.status === 'unsubscribed' ? [] : triggered;
      const contact = known ?? (automations.length > 0 ? await this.createContact(db, e) : undefined);
      if (automations.length > 0) await takeQuota(db, e.organizationId, utcDay(now), contact!.created ? 1 : 0, automations.length);
      const eventId = await recordInboundEvent(db, {
        organization_id: e.organizationId, name: e.name, contact_id: contact?.id ?? null, email: e.email, properties: e.properties,
        contact_created: contact?.created ?? false, runs_started: automations.length,
      });
      const runs = automations.length > 0 ? await this.startRuns(db, e.organizationId, contact!.id, eventId, automations) : [];
      const changeIds = await recordRunChanges(db, runs.map((r) => ({ ...r, state: 'started' as const, step: 0 })));
      return { eventId, changeIds, accepted: { id: eventId, contact_id: contact?.id ?? null, contact_created: contact?.created ?? false, run_ids: runs.map((r) => r.run_id) } };
    });
    await this.data.publish([eventId], changeIds);
    return accepted;
  }

  /** The event's contact if it exists; an unknown contact_id is refused. */
  private async knownContact(db: PoolClient, e: TriggerEvent): Promise<{ id: string; created: false; status: string } | undefined> {
    const { rows } = await db.query<{ id: string; status: string }>(
      `SELECT id, status FROM mail_contacts WHERE organization_id = $1 AND ${e.contactId ? 'id = $2::uuid' : 'email = $2'}`,
      [e.organizationId, e.contactId ?? e.email],
    );
    if (!rows[0] && e.contactId) throw new Refused({ reason: 'contact_not_found' });
    return rows[0] && { ...rows[0], created: false };
  }

  /** Creates the contact of an unknown address (subscribed). */
  private async createContact(db: PoolClient, e: TriggerEvent): Promise<{ id: string; created: boolean }> {
    // Two events for one new address at once: the second waits on the first's row, then finds it made.
    const { rows: [contact] } = await db.query<{ id: string; made: boolean }>(`WITH ${contactOfAddressCte('$1', '$2')} SELECT id, made FROM contact`, [e.organizationId, e.email]);
    return { id: contact!.id, created: contact!.made };
  }

  /** One run per automation: due now, or waiting for its first step's delay. */
  private async startRuns(db: PoolClient, organizationId: string, contactId: string, eventId: string, automations: { id: string; steps: AutomationStep[] }[]) {
    const { rows } = await db.query<{ id: string; automation_id: string }>(
      `INSERT INTO mail_automation_runs (organization_id, automation_id, contact_id, event_id, steps, state, next_at)
       SELECT $1, a, $2, $3, s, CASE WHEN d > 0 THEN 'waiting' ELSE 'running' END, now() + make_interval(secs => d::double precision / 1000)
         FROM unnest($4::uuid[], $5::bigint[], $6::jsonb[]) AS t(a, d, s)
       RETURNING id, automation_id`,
      [organizationId, contactId, eventId, automations.map((a) => a.id), automations.map((a) => a.steps[0]!.delay_minutes * this.minuteMs), automations.map((a) => JSON.stringify(a.steps))],
    );
    return rows.map((r) => ({ run_id: r.id, organization_id: organizationId, automation_id: r.automation_id, contact_id: contactId }));
  }
}

/** Takes `contacts` and `runs` of the day's quotas, or refuses naming the one spent. */
async function takeQuota(db: PoolClient, organizationId: string, day: string, contacts: number, runs: number): Promise<void> {
  await db.query('INSERT INTO mail_event_quotas (organization_id, day) VALUES ($1, $2) ON CONFLICT DO NOTHING', [organizationId, day]);
  const { rows } = await db.query<{ contacts: number; runs: number }>(
    `UPDATE mail_event_quotas SET contacts = contacts + $3, runs = runs + $4
      WHERE organization_id = $1 AND day = $2 AND contacts + $3 <= $5 AND runs + $4 <= $6
      RETURNING contacts, runs`,
    [organizationId, day, contacts, runs, NEW_CONTACTS_PER_DAY, RUNS_PER_DAY],
  );
  if (rows[0]) return;
  const { rows: used } = await db.query<{ contacts: number; runs: number }>('SELECT contacts, runs FROM mail_event_quotas WHERE organization_id = $1 AND day = $2', [organizationId, day]);
  const resets = `${new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString()}`;
  throw new Refused({ reason: used[0]!.contacts + contacts > NEW_CONTACTS_PER_DAY ? 'contact_quota_exceeded' : 'run_quota_exceeded', resets });
}
