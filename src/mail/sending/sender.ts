// The mail sender: a worker kind whose consumer reads mail.messages (keyed by
// organization) and queues each message in Postgres (send-queue.ts) before its
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
import type { SealedSecrets } from '../../platform/secrets/sealed-secrets.ts';
import { mailMessagesTopic } from '../../../topics/mail-messages.ts';
import type { MailConfig } from '../config.ts';
import type { MailMessageEvent } from '../emails/message-outbox.ts';
import type { MailEventOutbox } from '../events/mail-events.ts';
import { allowanceSettings, countAgainstAllowances, untilNextUtcDay, utcDay, type AllowanceSettings } from './daily-allowances.ts';
import { ORGANIZATION_WINDOW, SendQueue, type QueuedMessage } from './send-queue.ts';
import { SendRate } from './send-rate.ts';
import { sendQueueGauge } from './send-metrics.ts';
import { createRelay, describeFailure, hardRefusedRecipients, isPermanent, prepareHandover, type Copy, type LinkSettings, type Relay } from './smtp-handover.ts';
import { describeLeftOut } from './recipient-choices.ts';
import { neverFits } from './recipient-limits.ts';
import type { RecipientVerdict } from '../suppressions/recipient-verdicts.ts';

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
  /** Opens the domains' DKIM keys. */
  secrets: SealedSecrets;
}

export const senderOptions = (config: MailConfig & { PUBLIC_BASE_URL: string }, secrets: SealedSecrets): SenderOptions => ({
  links: { secret: config.MAIL_LINK_SECRET, publicBaseUrl: config.PUBLIC_BASE_URL, bounceDomain: config.MAIL_BOUNCE_DOMAIN },
  allowances: allowanceSettings(config),
  concurrency: config.MAIL_SEND_CONCURRENCY,
  leaseMs: config.MAIL_SEND_LEASE_MS,
  retryBaseMs: config.MAIL_RETRY_BASE_MS,
  secrets,
});

export class MailSender implements BackgroundTask {
  private readonly pg: Pool;
  private readonly sendQueue: SendQueue;
  private readonly rate: SendRate;
  private readonly relay: Relay;
  private readonly events: MailEventOutbox;
  private readonly log: Logger;
  private readonly options: SenderOptions;
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
    pg: Pool,
    sendQueue: SendQueue,
    rate: SendRate,
    relay: Relay,
    events: MailEventOutbox,
    log: Logger,
    options: SenderOptions,
  ) {
    this.pg = pg;
    this.sendQueue = sendQueue;
    this.rate = rate;
    this.relay = relay;
    this.events = events;
    this.log = log;
    this.options = options;
  }

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
      let taken: QueuedMessage[] = [];
      if (free > 0) {
        try {
          taken = await this.sendQueue.take(free, this.options.leaseMs);
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

  private async send(d: QueuedMessage, turn: { previous: Promise<void>; done: () => void }): Promise<void> {
    try {
      return await this.handOver(d, turn);
    } finally {
      turn.done();
    }
  }

  private async handOver(d: QueuedMessage, turn: { previous: Promise<void>; done: () => void }): Promise<void> {
    const outgoing = await prepareHandover(this.pg, this.options.secrets, d.message_id, this.options.links, d.handed_to);
    await turn.previous;
    const attempt = d.attempts.length + 1;
    const leftOut = describeLeftOut(outgoing.leftOut);
    if (outgoing.emails === 0) {
      // Nobody left: every recipient suppressed or unsubscribed while it waited.
      const why = `Not sent: ${leftOut || 'every recipient is suppressed'}`.slice(0, 500);
      const suppressed = { organization_id: d.organization_id, message_id: d.message_id, type: 'suppressed' as const, detail: why, once_key: `suppressed:${d.message_id}` };
      await this.events.publish(await this.sendQueue.record(d, 'suppressed', leftOut ? { attempt, at: new Date().toISOString(), outcome: 'skipped', response: why } : undefined, 0, { event: suppressed }));
      return;
    }
    if (d.counted_day === null) {
      // The sender's clock names the day (tests move it with faketime).
      const now = new Date();
      const refused = await withTransaction(this.pg, async (client) => {
        const refusal = await countAgainstAllowances(client, this.options.allowances, utcDay(now), d.organization_id, d.from_domain, outgoing.emails);
        if (refusal) return refusal;
        if (!(await this.sendQueue.markCounted(client, d, utcDay(now), outgoing.emails))) throw new Error('lost the hold on a message');
        return null;
      });
      if (refused?.never) {
        // A cap lowered after it was accepted: waiting would never end.
        const response = neverFits(outgoing.emails, refused);
        this.log.warn({ messageId: d.message_id, organizationId: d.organization_id, allowance: refused.allowance, limit: refused.limit }, 'message larger than a daily allowance can ever be; failed');
        const failed = { organization_id: d.organization_id, message_id: d.message_id, type: 'failed' as const, detail: response.slice(0, 500), once_key: `failed:${d.message_id}` };
        await this.events.publish(await this.sendQueue.record(d, 'failed', { attempt, at: now.toISOString(), outcome: 'skipped', response: response.slice(0, 500) }, 0, { event: failed }));
        return;
      }
      if (refused) {
        this.log.info({ messageId: d.message_id, organizationId: d.organization_id, allowance: refused.allowance }, 'daily allowance spent; the message waits for the next UTC day');
        await this.sendQueue.wait(d, untilNextUtcDay(now));
        return;
      }
    }
    turn.done(); // counted: the next message of the organization may count while this one goes
    const at = new Date().toISOString();
    const round = await this.handOverCopies(d, outgoing.copies);
    if (round.stopped) {
      // Stopping: back in its place, for this or another sender (copies taken are not sent again).
      await this.sendQueue.wait(d, 0);
      return;
    }
    const verdicts: RecipientVerdict[] = round.refused.map((r) => ({
      organizationId: d.organization_id, messageId: d.message_id, recipient: r.recipient, kind: 'bounce', detail: r.response, permanent: true, source: 'handover',
    }));
    const notes = [...round.refused.map((r) => `${r.recipient} refused: ${r.response}`), ...(leftOut ? [`left out: ${leftOut}`] : [])];
    const response = (reply: string) => [reply, ...notes].join('; ').slice(0, 500);
    if (round.transient !== undefined) {
      const failure = response(describeFailure(round.transient));
      // The last attempt: email.failed; an earlier one: email.delivery_delayed (once per attempt).
      const last = attempt >= MAX_ATTEMPTS;
      const type = last ? 'failed' as const : 'delivery_delayed' as const;
      const event = { organization_id: d.organization_id, message_id: d.message_id, type, detail: failure, once_key: last ? `failed:${d.message_id}` : `delivery_delayed:${d.message_id}:${attempt}` };
      if (last) {
        await this.events.publish(await this.sendQueue.record(d, 'failed', { attempt, at, outcome: 'deferred', response: failure }, 0, { event, verdicts }));
      } else {
        await this.events.publish(await this.sendQueue.record(d, 'retrying', { attempt, at, outcome: 'deferred', response: failure }, this.options.retryBaseMs * 2 ** (attempt - 1), { event, verdicts }));
      }
      return;
    }
    if (d.handed_to.length > 0 || round.accepted > 0) {
      const reply = response(round.responses.join(' | ') || 'handed over before');
      const delivered = { organization_id: d.organization_id, message_id: d.message_id, type: 'delivered' as const, detail: reply, once_key: `delivered:${d.message_id}` };
      await this.events.publish(await this.sendQueue.record(d, 'sent', { attempt, at, outcome: 'delivered', response: reply }, 0, { event: delivered, verdicts }));
      return;
    }
    // Refused for good: the message (no suppression: a refusal of its content says nothing of the
    // address), or each of its recipients at RCPT TO (suppressed).
    const reply = response(round.responses.join(' | '));
    const bounce = { organization_id: d.organization_id, message_id: d.message_id, type: 'bounced' as const, detail: reply, once_key: `bounced:${d.message_id}` };
    await this.events.publish(await this.sendQueue.record(d, 'bounced', { attempt, at, outcome: 'bounced', response: reply }, 0, { event: bounce, verdicts }));
  }

  /**
   * Hands the copies over one after another, each within the send rate, noting each copy the
   * relay took; stops at the first transient failure (the rest go at the retry).
   */
  private async handOverCopies(d: QueuedMessage, copies: readonly Copy[]): Promise<Round> {
    const round: Round = { accepted: 0, refused: [], responses: [], stopped: false };
    for (const copy of copies) {
      let handedOver;
      try {
        handedOver = await this.rate.within(() => this.relay.sendMail(copy.mail), () => !this.running);
      } catch (err) {
        const refused = hardRefusedRecipients(err);
        round.refused.push(...refused);
        if (!isPermanent(err)) {
          round.transient = err;
          return round;
        }
        // Refused for good: its recipients (suppressed) or the message (bounced); the next copy goes on.
        if (refused.length === 0) round.responses.push(describeFailure(err));
        continue;
      }
      if (!handedOver.ran) {
        round.stopped = true;
        return round;
      }
      const info = handedOver.result;
      const refusedNow = hardRefusedRecipients(info);
      round.refused.push(...refusedNow);
      const taken = copy.recipients.filter((r) => (info.accepted ?? []).some((a) => String(a).toLowerCase() === r));
      round.accepted += taken.length;
      round.responses.push(String(info.response ?? '').slice(0, 500));
      if (copies.length > 1 && taken.length > 0) await this.sendQueue.markHandedTo(d, taken);
    }
    return round;
  }
}

/** What handing a message's copies over came to. */
interface Round {
  /** Recipients the relay took in this round. */
  accepted: number;
  /** Recipients it refused for good at RCPT TO. */
  refused: { recipient: string; response: string }[];
  /** Its replies to the copies it took, and its refusals of a whole copy. */
  responses: string[];
  /** A transient failure that ended the round: the message is retried. */
  transient?: unknown;
  /** The sender is stopping: the message goes back to the queue. */
  stopped: boolean;
}

export function mailSenderKind(platform: Platform, config: MailConfig & { PUBLIC_BASE_URL: string }, events: MailEventOutbox): BatchWorkerKind<MailMessageEvent> {
  const sendQueue = new SendQueue(platform.pg);
  const sender = new MailSender(
    platform.pg,
    sendQueue,
    new SendRate(platform.redis, `mail:send-rate:${platform.config.TOPIC_PREFIX}`, config.MAIL_SEND_RATE_PER_SEC),
    createRelay(config.SMTP_URL, config.MAIL_SEND_CONCURRENCY),
    events,
    platform.log.child({ component: 'mail-sender' }),
    senderOptions(config, platform.secrets),
  );
  return {
    kind: 'mail-sender',
    scrapeGauges: sendQueueGauge(platform.pg, ORGANIZATION_WINDOW),
    topics: [mailMessagesTopic],
    concurrency: 2,
    background: sender,
    handleBatch: async (messages: ActorMessage<MailMessageEvent>[]) => {
      if ((await sendQueue.enqueue(messages.map((m) => m.value.message_id))) > 0) sender.nudge();
    },
  };
}

/** Queue order within an organization: queued_at, accepted_at, message_id. */
function inQueueOrder(a: QueuedMessage, b: QueuedMessage): number {
  const compare = (x: bigint | string, y: bigint | string) => (x < y ? -1 : x > y ? 1 : 0);
  return compare(BigInt(a.queued_us), BigInt(b.queued_us)) || compare(BigInt(a.accepted_us), BigInt(b.accepted_us)) || compare(a.message_id, b.message_id);
}
