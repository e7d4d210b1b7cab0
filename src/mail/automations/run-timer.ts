// The automation runs' durable timer: runs whose next step is due (next_at passed)
// are published to mail.automation-steps in one transaction held across the Kafka
// send (as broadcast-jobs.ts does), which also sets their next_at a lease ahead: a
// worker that dies before the commit leaves them to the next pass, and a run whose
// command was lost (a worker killed mid-step, a command dead-lettered) is published
// again when its lease runs out. Two workers never take one run (SKIP LOCKED); a
// run published twice is harmless (the actor takes the step the run has stored,
// once, and sets next_at itself when the run moves on).
import { Repeating } from '../../platform/background.ts';
import type { BackgroundTask } from '../../platform/actors/worker-kind.ts';
import type { Publisher } from '../../platform/kafka/publisher.ts';
import type { Logger } from '../../platform/logger.ts';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { mailAutomationStepsTopic } from '../../../topics/mail-automations.ts';

export interface AutomationStepCommand {
  run_id: string;
  organization_id: string;
  issued_at: number;
}

const DUE_PER_PASS = 500;
/** How long a published run is left to the actor before it is published again. */
export const STEP_LEASE_MS = 60_000;

export class RunTimer implements BackgroundTask {
  private readonly pg: Pool;
  private readonly publisher: Publisher;
  private readonly log: Logger;
  private readonly leaseMs: number;
  private readonly repeating: Repeating;

  constructor(
    pg: Pool,
    publisher: Publisher,
    log: Logger,
    intervalMs = 250,
    leaseMs = STEP_LEASE_MS,
  ) {
    this.pg = pg;
    this.publisher = publisher;
    this.log = log;
    this.leaseMs = leaseMs;
    this.repeating = new Repeating(async () => {
      // A full pass means more are due: go on at once.
      while ((await this.runDue().catch((err) => (this.log.warn({ err }, 'automation timer: pass failed; will retry'), 0))) === DUE_PER_PASS);
    }, intervalMs);
  }

  start(): void {
    this.repeating.start();
  }

  stop(): Promise<void> {
    return this.repeating.stop();
  }

  /** Publishes the runs that are due (or whose lease ran out) and marks them running; how many. */
  async runDue(): Promise<number> {
    return withTransaction(this.pg, async (db) => {
      const { rows } = await db.query<{ id: string; organization_id: string }>(
        `UPDATE mail_automation_runs SET next_at = now() + make_interval(secs => $1::double precision / 1000), state = 'running', updated_at = now()
          WHERE id IN (SELECT id FROM mail_automation_runs WHERE next_at <= now() ORDER BY next_at LIMIT ${DUE_PER_PASS} FOR UPDATE SKIP LOCKED)
          RETURNING id, organization_id`,
        [this.leaseMs],
      );
      const now = Date.now();
      await this.publisher.publish<AutomationStepCommand>(mailAutomationStepsTopic, rows.map((r) => ({ key: r.id, value: { run_id: r.id, organization_id: r.organization_id, issued_at: now } })));
      return rows.length;
    });
  }
}
