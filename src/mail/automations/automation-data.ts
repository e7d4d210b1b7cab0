// What automations tell data teams: the events POST /events accepted
// (mail.inbound-events) and each change of a run (mail.automation-runs), both keyed
// by organization. Each is recorded with its outbox row in the transaction that
// made it, and published by that process or else by the relay of any ingress
// (RowOutbox), as mail events are.
import type { PoolClient } from 'pg';
import { bestEffort } from '../../platform/background.ts';
import type { Publisher } from '../../platform/kafka/publisher.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Outbox } from '../../platform/outbox/outbox.ts';
import { RowOutbox } from '../../platform/outbox/row-outbox.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { mailAutomationRunsTopic, mailInboundEventsTopic } from '../../../topics/mail-automations.ts';

export type RunChangeState = 'started' | 'step_queued' | 'waiting' | 'completed' | 'canceled';

export interface RunChange {
  run_id: string;
  organization_id: string;
  automation_id: string;
  contact_id: string;
  state: RunChangeState;
  step: number;
  message_id?: string | null;
}

interface RunChangeRow extends Required<RunChange> {
  id: string;
  occurred_at: Date;
}

interface InboundEventRow {
  id: string;
  organization_id: string;
  name: string;
  contact_id: string | null;
  email: string | null;
  properties: Record<string, unknown>;
  contact_created: boolean;
  runs_started: number;
  received_at: Date;
}

const RECORD_CHANGES = `
WITH c AS (
  INSERT INTO mail_automation_run_changes (run_id, organization_id, automation_id, contact_id, state, step, message_id)
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::int[], $7::uuid[])
  RETURNING id, occurred_at
), queued AS (
  INSERT INTO mail_automation_run_change_outbox (change_id, created_at) SELECT id, occurred_at FROM c
)
SELECT id FROM c`;

/** Records run changes (with their outbox rows) in the caller's transaction; returns their ids. */
export async function recordRunChanges(db: PoolClient, changes: readonly RunChange[]): Promise<string[]> {
  if (changes.length === 0) return [];
  const column = <K extends keyof RunChange>(k: K) => changes.map((c) => c[k] ?? null);
  const { rows } = await db.query<{ id: string }>(RECORD_CHANGES, [
    column('run_id'), column('organization_id'), column('automation_id'), column('contact_id'), column('state'), column('step'), column('message_id'),
  ]);
  return rows.map((r) => r.id);
}

/** Records an accepted event (with its outbox row) in the caller's transaction; returns its id. */
export async function recordInboundEvent(db: PoolClient, e: Omit<InboundEventRow, 'id' | 'received_at'>): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `WITH e AS (
       INSERT INTO mail_inbound_events (organization_id, name, contact_id, email, properties, contact_created, runs_started)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id, received_at
     ), queued AS (
       INSERT INTO mail_inbound_event_outbox (event_id, created_at) SELECT id, received_at FROM e
     )
     SELECT id FROM e`,
    [e.organization_id, e.name, e.contact_id, e.email, JSON.stringify(e.properties), e.contact_created, e.runs_started],
  );
  return rows[0]!.id;
}

/** How long a caller waits for a publication before going on (the relay takes over). */
const PUBLISH_WAIT_MS = 2000;

export class AutomationData {
  private readonly log: Logger;
  private readonly events: RowOutbox<InboundEventRow>;
  private readonly changes: RowOutbox<RunChangeRow>;

  /** `pool` commits without waiting for the disk (row-outbox.ts). */
  constructor(pool: Pool, publisher: Publisher, log: Logger) {
    this.log = log;
    this.events = new RowOutbox<InboundEventRow>(pool, {
      name: mailInboundEventsTopic.name,
      table: 'mail_inbound_event_outbox',
      idColumn: 'event_id',
      readItems: 'SELECT * FROM mail_inbound_events WHERE id = ANY($1::uuid[]) ORDER BY received_at',
      send: (rows) => publisher.publish(mailInboundEventsTopic, rows.map((r) => ({
        key: r.organization_id,
        value: {
          event_id: r.id, organization_id: r.organization_id, name: r.name, contact_id: r.contact_id, email: r.email, properties: JSON.stringify(r.properties),
          contact_created: r.contact_created, runs_started: r.runs_started, received_at: r.received_at.getTime(),
        },
      }))),
    }, log);
    this.changes = new RowOutbox<RunChangeRow>(pool, {
      name: mailAutomationRunsTopic.name,
      table: 'mail_automation_run_change_outbox',
      idColumn: 'change_id',
      readItems: 'SELECT * FROM mail_automation_run_changes WHERE id = ANY($1::uuid[]) ORDER BY occurred_at, step',
      send: (rows) => publisher.publish(mailAutomationRunsTopic, rows.map((r) => ({
        key: r.organization_id,
        value: {
          change_id: r.id, run_id: r.run_id, organization_id: r.organization_id, automation_id: r.automation_id, contact_id: r.contact_id,
          state: r.state, step: r.step, message_id: r.message_id, occurred_at: r.occurred_at.getTime(),
        },
      }))),
    }, log);
  }

  get outboxes(): Outbox[] {
    return [this.events.outbox, this.changes.outbox];
  }

  /** Publishes recorded events and run changes soon; a failure is logged and left to the relay. */
  async publish(eventIds: readonly string[], changeIds: readonly string[]): Promise<void> {
    const warn = (err: unknown) => this.log.warn({ err }, 'automation data publish failed; the relay will retry');
    await Promise.all([
      eventIds.length > 0 ? bestEffort(this.events.publishSoon(eventIds), PUBLISH_WAIT_MS, warn) : undefined,
      changeIds.length > 0 ? bestEffort(this.changes.publishSoon(changeIds), PUBLISH_WAIT_MS, warn) : undefined,
    ]);
  }
}
