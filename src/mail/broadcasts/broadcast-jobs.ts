// The broadcasts' durable timers (mail_broadcast_jobs): every second, due jobs are
// published to mail.commands and deleted in one transaction held across the Kafka
// send. A worker that dies before the commit leaves its jobs to the next run (a job
// published twice is harmless: the actor acts on the broadcast's state); two
// workers never take one job (SKIP LOCKED); a cancel waits for a run holding its
// job, and the command then finds the broadcast canceled.
import { Repeating } from '../../platform/background.ts';
import type { Publisher } from '../../platform/kafka/publisher.ts';
import type { Logger } from '../../platform/logger.ts';
import type { BackgroundTask } from '../../platform/actors/worker-kind.ts';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { mailCommandsTopic } from '../../../topics/mail-commands.ts';
import { takeDueJobs } from './broadcast-state.ts';

export interface MailCommand {
  broadcast_id: string;
  organization_id: string;
  command: 'start' | 'decide';
  issued_at: number;
}

const DUE_PER_RUN = 100;

export class BroadcastJobs implements BackgroundTask {
  private readonly pg: Pool;
  private readonly publisher: Publisher;
  private readonly log: Logger;
  private readonly repeating: Repeating;

  constructor(
    pg: Pool,
    publisher: Publisher,
    log: Logger,
    intervalMs = 1000,
  ) {
    this.pg = pg;
    this.publisher = publisher;
    this.log = log;
    this.repeating = new Repeating(async () => {
      await this.runDue().catch((err) => this.log.warn({ err }, 'broadcast jobs: run failed; will retry'));
    }, intervalMs);
  }

  start(): void {
    this.repeating.start();
  }

  stop(): Promise<void> {
    return this.repeating.stop();
  }

  /** Publishes and deletes the jobs that are due; how many. */
  async runDue(): Promise<number> {
    return withTransaction(this.pg, async (client) => {
      const rows = await takeDueJobs(client, DUE_PER_RUN);
      const now = Date.now();
      await this.publisher.publish<MailCommand>(mailCommandsTopic, rows.map((r) => ({ key: r.broadcast_id, value: { ...r, issued_at: now } })));
      return rows.length;
    });
  }
}
