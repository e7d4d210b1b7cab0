// The mail sender: a worker kind whose consumer reads mail.messages (keyed by
// organization) and queues each message in Postgres (deliveries.ts) before its
// offset is committed, and whose loop, running beside the consumer, hands due
// messages over to the relay: counted against the daily allowances first (once),
// then within the platform send rate, then over SMTP. Any number of sender
// processes share the queue, the allowances and the rate. A sender killed during
// a hand-over leaves that message leased; another sends it again once the lease
// runs out (same Message-ID): at most MAIL_SEND_CONCURRENCY messages per killed
// process, as the README states.
import type { ActorMessage, BatchWorkerKind, BackgroundTask } from '../../platform/actors/worker-kind.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Platform } from '../../platform/platform.ts';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { mailMessagesTopic } from '../../../topics/mail-messages.ts';
import type { MailConfig } from '../config.ts';
import type { MailMessageEvent } from '../emails/message-queue.ts';
import type { MailEventQueue } from '../events/mail-events.ts';
import { allowanceSettings, countAgainstAllowances, untilNextUtcDay, utcDay, type AllowanceSettings } from './daily-allowances.ts';
import { Deliveries, type Delivery } from './deliveries.ts';
import { SendRate } from './send-rate.ts';
import { createRelay, describeFailure, isPermanent, prepareHandover, type LinkSettings, type Relay } from './smtp-handover.ts';

/** Attempts of a message before a transient failure becomes final (spec: 4). */
export const MAX_ATTEMPTS = 4;
/** How long the loop sleeps when nothing is due (a new message wakes it at once in this process). */
const IDLE_MS = 200;

export interface SenderOptions {
  allowances: AllowanceSettings;
  concurrency: number;
  leaseMs: number;
  retryBaseMs: number;
  links: LinkSettings;
}

export const senderOptions = (config: MailConfig & { PUBLIC_BASE_URL: string }): SenderOptions => ({
  links: { secret: config.MAIL_LINK_SECRET, publicBaseUrl: config.PUBLIC_BASE_URL, bounceDomain: config.MAIL_BOUNCE_DOMAIN },
  allowances: allowanceSettings(config),
  concurrency: config.MAIL_SEND_CONCURRENCY,
  leaseMs: config.MAIL_SEND_LEASE_MS,
  retryBaseMs: config.MAIL_RETRY_BASE_MS,
});

export class MailSender implements BackgroundTask {
  private running = false;
  private inFlight = new Set<Promise<void>>();
  /**
   * Per organization, the end of the last allowance check started: messages of one organization
   * are handed over side by side but counted against the allowances one after another in queue
   * order, so a message never takes the allowance of one before it.
   */
  private countingTurns = new Map<string, Promise<void>>();
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly pg: Pool,
    private readonly deliveries: Deliveries,
    private readonly rate: SendRate,
    private readonly relay: Relay,
    private readonly events: MailEventQueue,
    private readonly log: Logger,
    private readonly options: SenderOptions,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  /** Looks for due messages now rather than after the idle pause. */
  nudge(): void {
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.nudge();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
    this.relay.close();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const free = this.options.concurrency - this.inFlight.size;
      let taken: Delivery[] = [];
      if (free > 0) {
        try {
          taken = await this.deliveries.take(free, this.options.leaseMs);
        } catch (err) {
          this.log.warn({ err }, 'mail sender could not read its queue; will retry');
        }
      }
      taken.sort(inQueueOrder);
      for (const delivery of taken) {
        const work: Promise<void> = this.send(delivery, this.countingTurn(delivery.organization_id))
          .catch((err) => this.log.error({ err, messageId: delivery.message_id }, 'mail hand-over failed unexpectedly; its lease will run out and it goes again'))
          .finally(() => {
            this.inFlight.delete(work);
            this.nudge();
          });
        this.inFlight.add(work);
      }
      if (taken.length === 0 || this.inFlight.size >= this.options.concurrency) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, IDLE_MS);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = undefined;
      }
    }
  }

  /** The turn of the next message of `organizationId` to be counted: wait for `previous`, then `done()`. */
  private countingTurn(organizationId: string): { previous: Promise<void>; done: () => void } {
    const previous = this.countingTurns.get(organizationId) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const turn = previous.then(() => mine);
    this.countingTurns.set(organizationId, turn);
    void turn.then(() => {
      if (this.countingTurns.get(organizationId) === turn) this.countingTurns.delete(organizationId);
    });
    return { previous, done };
  }

  private async send(d: Delivery, turn: { previous: Promise<void>; done: () => void }): Promise<void> {
    try {
      return await this.handOver(d, turn);
    } finally {
      turn.done();
    }
  }

  private async handOver(d: Delivery, turn: { previous: Promise<void>; done: () => void }): Promise<void> {
    const outgoing = await prepareHandover(this.pg, d.message_id, this.options.links);
    await turn.previous;
    if (!outgoing.mail) {
      await this.deliveries.record(d, 'suppressed');
      return;
    }
    if (d.counted_day === null) {
      // The sender's clock names the day (tests move it with faketime).
      const now = new Date();
      const spent = await withTransaction(this.pg, async (client) => {
        const refused = await countAgainstAllowances(client, this.options.allowances, utcDay(now), d.organization_id, d.from_domain, outgoing.emails);
        if (refused) return refused;
        if (!(await this.deliveries.markCounted(client, d, utcDay(now), outgoing.emails))) throw new Error('lost the hold on a message');
        return null;
      });
      if (spent) {
        this.log.info({ messageId: d.message_id, organizationId: d.organization_id, allowance: spent }, 'daily allowance spent; the message waits for the next UTC day');
        await this.deliveries.wait(d, untilNextUtcDay(now));
        return;
      }
    }
    turn.done(); // counted: the next message of the organization may count while this one goes
    const attempt = d.attempts.length + 1;
    const at = new Date().toISOString();
    const mail = outgoing.mail;
    let handedOver;
    try {
      handedOver = await this.rate.within(() => this.relay.sendMail(mail), () => !this.running);
    } catch (err) {
      const response = describeFailure(err);
      if (isPermanent(err)) {
        const bounce = { organization_id: d.organization_id, message_id: d.message_id, type: 'bounced' as const, detail: response, once_key: `bounced:${d.message_id}` };
        await this.events.publish(await this.deliveries.record(d, 'bounced', { attempt, at, outcome: 'bounced', response }, 0, bounce));
      } else if (attempt >= MAX_ATTEMPTS) {
        await this.deliveries.record(d, 'failed', { attempt, at, outcome: 'deferred', response });
      } else {
        await this.deliveries.record(d, 'retrying', { attempt, at, outcome: 'deferred', response }, this.options.retryBaseMs * 2 ** (attempt - 1));
      }
      return;
    }
    if (!handedOver.ran) {
      // Stopping: back in its place, for this or another sender.
      await this.deliveries.wait(d, 0);
      return;
    }
    const response = String(handedOver.result.response ?? '').slice(0, 500);
    const delivered = { organization_id: d.organization_id, message_id: d.message_id, type: 'delivered' as const, detail: response, once_key: `delivered:${d.message_id}` };
    await this.events.publish(await this.deliveries.record(d, 'sent', { attempt, at, outcome: 'delivered', response }, 0, delivered));
  }
}

export function mailSenderKind(platform: Platform, config: MailConfig & { PUBLIC_BASE_URL: string }, events: MailEventQueue): BatchWorkerKind<MailMessageEvent> {
  const deliveries = new Deliveries(platform.pg);
  const sender = new MailSender(
    platform.pg,
    deliveries,
    new SendRate(platform.redis, `mail:send-rate:${platform.config.TOPIC_PREFIX}`, config.MAIL_SEND_RATE_PER_SEC),
    createRelay(config.SMTP_URL, config.MAIL_SEND_CONCURRENCY),
    events,
    platform.log.child({ component: 'mail-sender' }),
    senderOptions(config),
  );
  return {
    kind: 'mail-sender',
    topics: [mailMessagesTopic],
    concurrency: 2,
    background: sender,
    handleBatch: async (messages: ActorMessage<MailMessageEvent>[]) => {
      if ((await deliveries.enqueue(messages.map((m) => m.value.message_id))) > 0) sender.nudge();
    },
  };
}

/** Queue order within an organization: queued_at, accepted_at, message_id. */
function inQueueOrder(a: Delivery, b: Delivery): number {
  const compare = (x: bigint | string, y: bigint | string) => (x < y ? -1 : x > y ? 1 : 0);
  return compare(BigInt(a.queued_us), BigInt(b.queued_us)) || compare(BigInt(a.accepted_us), BigInt(b.accepted_us)) || compare(a.message_id, b.message_id);
}
