// The automation runs' durable timer: runs whose next step is due (next_at passed)
// are published to mail.automation-steps and their next_at cleared in one
// transaction held across the Kafka send (as broadcast-jobs.ts does): a worker
// that dies before the commit leaves them to the next pass; two workers never take
// one run (SKIP LOCKED); a run published twice is harmless (the actor takes the
// step the run has stored, once).
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

export class RunTimer implements BackgroundTask {
  private readonly repeating: Repeating;

  constructor(
    private readonly pg: Pool,
    private readonly publisher: Publisher,
    private readonly log: Logger,
    intervalMs = 250,
  ) {
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

  /** Publishes the runs that are due and marks them running; how many. */
  async runDue(): Promise<number> {
    return withTransaction(this.pg, async (db) => {
      const { rows } = await db.query<{ id: string; organization_id: string }>(
        `UPDATE mail_automation_runs SET next_at = NULL, state = 'running', updated_at = now()
          WHERE id IN (SELECT id FROM mail_automation_runs WHERE next_at <= now() ORDER BY next_at LIMIT ${DUE_PER_PASS} FOR UPDATE SKIP LOCKED)
          RETURNING id, organization_id`,
      );
      const now = Date.now();
      await this.publisher.publish<AutomationStepCommand>(mailAutomationStepsTopic, rows.map((r) => ({ key: r.id, value: { run_id: r.id, organization_id: r.organization_id, issued_at: now } })));
      return rows.length;
    });
  }
}
