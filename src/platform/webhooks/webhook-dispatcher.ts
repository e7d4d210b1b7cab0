// Makes webhook attempts: claims due deliveries from a product's webhook deliveries and
// sends them, many at once, with caps per owner (workspace, organization) and
// per endpoint, so that a slow or dead endpoint holds a few of the slots and
// other endpoints and owners go on (it takes concurrency / perOwner owners with
// hanging endpoints to fill every slot of a process).
// Everything it needs is in Postgres, so any number of dispatchers can run and
// a restarted one resumes the schedule where it stood. The product signs: its
// `headers` function makes each attempt's headers (signature, ids).
import type { Logger } from '../logger.ts';
import type { AttemptResult, ClaimedDelivery, WebhookDeliveries } from './webhook-deliveries.ts';
import type { WebhookSender } from './webhook-sender.ts';

/** The headers of one attempt of a delivery, signed at the time of the attempt. */
export type AttemptHeaders = (delivery: ClaimedDelivery) => Record<string, string>;

export interface DispatcherOptions {
  concurrency: number;
  /** Finished deliveries older than this leave the log. */
  logRetentionDays: number;
  perOwner: number;
  perEndpoint: number;
  leaseMarginMs: number;
  pollMs: number;
  timeoutMs: number;
}

const RECOVER_EVERY_MS = 5000;
const PURGE_EVERY_MS = 10 * 60_000;

export class WebhookDispatcher {
  private readonly deliveries: WebhookDeliveries;
  private readonly send: WebhookSender;
  private readonly headers: AttemptHeaders;
  private readonly log: Logger;
  private readonly options: DispatcherOptions;
  private readonly byEndpoint = new Map<string, number>();
  private readonly byOwner = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private total = 0;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private lastRecovery = 0;
  private lastPurge = 0;

  constructor(
    deliveries: WebhookDeliveries,
    send: WebhookSender,
    headers: AttemptHeaders,
    log: Logger,
    options: DispatcherOptions,
  ) {
    this.deliveries = deliveries;
    this.send = send;
    this.headers = headers;
    this.log = log;
    this.options = options;
  }

  start(): void {
    this.stopped = false;
    this.log.info(this.options, 'webhook dispatcher started');
    this.nudge();
  }

  /** Looks for due deliveries now (new deliveries were queued, or a slot came free). */
  nudge(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), 0);
  }

  /** Stops claiming and waits for the attempts in flight to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking;
    await Promise.all(this.running);
  }

  private tick(): void {
    if (this.ticking) {
      this.again = true; // the running tick looks again as soon as it ends
      return;
    }
    this.ticking = this.claimAndSend()
      .catch((err) => this.log.warn({ err }, 'webhook dispatcher could not claim deliveries; will retry'))
      .finally(() => {
        this.ticking = undefined;
        const delay = this.again ? 0 : this.options.pollMs;
        this.again = false;
        if (!this.stopped) this.timer = setTimeout(() => this.tick(), delay);
      });
  }

  private async claimAndSend(): Promise<void> {
    if (Date.now() - this.lastRecovery > RECOVER_EVERY_MS) {
      this.lastRecovery = Date.now();
      const recovered = await this.deliveries.recoverExpired();
      if (recovered > 0) this.log.warn({ deliveries: recovered }, 'webhook attempts interrupted by a stopped dispatcher were counted as failed');
    }
    if (Date.now() - this.lastPurge > PURGE_EVERY_MS) {
      this.lastPurge = Date.now();
      const purged = await this.deliveries.purgeFinished(this.options.logRetentionDays);
      if (purged > 0) this.log.info({ deliveries: purged, days: this.options.logRetentionDays }, 'old finished webhook deliveries purged');
    }
    const { perOwner, perEndpoint } = this.options;
    while (!this.stopped && this.total < this.options.concurrency) {
      const full = (counts: Map<string, number>, cap: number) => [...counts].filter(([, n]) => n >= cap).map(([id]) => id);
      const claimed = await this.deliveries.claim(
        this.options.concurrency - this.total,
        {
          busyOwners: full(this.byOwner, perOwner),
          busyEndpoints: full(this.byEndpoint, perEndpoint),
          ownerFree: (id) => perOwner - (this.byOwner.get(id) ?? 0),
          endpointFree: (id) => perEndpoint - (this.byEndpoint.get(id) ?? 0),
        },
        // The lease outlasts the attempt's own deadline, so only a dead dispatcher's lease runs out.
        this.options.timeoutMs + this.options.leaseMarginMs,
      );
      if (claimed.length === 0) return;
      for (const delivery of claimed) this.launch(delivery);
    }
  }

  private launch(delivery: ClaimedDelivery): void {
    const count = (counts: Map<string, number>, id: string, by: number) => {
      const n = (counts.get(id) ?? 0) + by;
      if (n > 0) counts.set(id, n);
      else counts.delete(id);
    };
    this.total++;
    count(this.byEndpoint, delivery.endpoint_id, 1);
    count(this.byOwner, delivery.owner_id, 1);
    const run = this.attempt(delivery).finally(() => {
      this.total--;
      count(this.byEndpoint, delivery.endpoint_id, -1);
      count(this.byOwner, delivery.owner_id, -1);
      this.running.delete(run);
      this.nudge();
    });
    this.running.add(run);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    let result: AttemptResult;
    try {
      result = await this.send(delivery.url, delivery.body, this.headers(delivery));
    } catch (err) {
      // The sender answers failures as results; anything thrown is a failure of this attempt too.
      result = { outcome: 'failed', statusCode: null, error: 'the request could not be made' };
      this.log.warn({ err, deliveryId: delivery.id }, 'webhook sender threw');
    }
    try {
      const state = await this.deliveries.finish(delivery, result);
      this.log.debug({ deliveryId: delivery.id, attempt: delivery.attempts, state, status: result.statusCode }, 'webhook attempt finished');
    } catch (err) {
      // Not recorded: the lease runs out and the attempt counts as interrupted, so nothing is lost.
      this.log.warn({ err, deliveryId: delivery.id }, 'could not record a webhook attempt');
    }
  }
}
