// What a webhook dispatcher needs from a product's webhook deliveries: due
// deliveries claimed under a lease, each attempt's result recorded, attempts of
// a dead dispatcher recovered, old finished deliveries purged. Each product
// keeps its own tables (table-webhook-deliveries.ts implements this over them).

/** Delivery states, per event and endpoint. */
export const DELIVERY_STATES = ['queued', 'attempted', 'acknowledged', 'permanently_rejected', 'retried', 'stopped'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** How many attempts a delivery gets and how long each failure waits. */
export interface RetryPolicy {
  maxAttempts: number;
  /** Delay after failed attempt `attempt` (1-based, below maxAttempts). */
  delayMs: (attempt: number) => number;
}

export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  /** The tenant the endpoint belongs to (a workspace, an organization): its slots are capped. */
  owner_id: string;
  event_type: string;
  /** The event's own id (a scan id, a mail event id): the receiver's idempotency key. */
  event_id: string;
  attempts: number;
  body: string;
  url: string;
  /** The current secret first, then one in its grace period after a rotation. */
  secrets: string[];
}

/** Free attempt slots of the dispatcher that claims. */
export interface Slots {
  busyOwners: readonly string[];
  busyEndpoints: readonly string[];
  ownerFree: (ownerId: string) => number;
  endpointFree: (endpointId: string) => number;
}

export type AttemptResult = { outcome: 'acknowledged' | 'rejected' | 'failed'; statusCode: number | null; error: string | null };

export interface WebhookDeliveries {
  claim(limit: number, slots: Slots, leaseMs: number): Promise<ClaimedDelivery[]>;
  finish(delivery: ClaimedDelivery, result: AttemptResult): Promise<DeliveryState>;
  recoverExpired(): Promise<number>;
  purgeFinished(days: number): Promise<number>;
}
