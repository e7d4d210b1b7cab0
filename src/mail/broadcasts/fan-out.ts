// The fan-out of a broadcast, in batches of 500 contacts (MAIL_FANOUT_BATCH), or fewer when their
// messages reach 64 MB (MAIL_FANOUT_BATCH_BYTES; 2 MB of HTML and 2 MB of text to 500 contacts would
// be 2 GB in one statement, past what one string or parameter can hold). Each batch is one
// transaction: the broadcast's row locked (a cancel waits for the batch and the
// next batch sees it), the recipient rows, the messages with their outbox rows,
// and the counters and the cursor (the last contact id taken). A process killed
// at any moment loses a whole batch or none of it, and the next run goes on from
// the committed cursor: every contact gets exactly one recipient row and one
// message. (listmonk moves its cursor when it fetches, so a crash there skips or
// repeats contacts.) The messages are published after the commit; what a crash
// leaves unpublished, the ingresses' outbox relay publishes. A fan-out that cannot
// go on ends `canceled` with its reason (end-broadcast.ts).
import { createHash, randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { parseSegmentFilter } from '../audience/segment-filter.ts';
import type { MessageOutbox } from '../emails/message-outbox.ts';
import { storeFanOut } from '../emails/messages.ts';
import { nextContacts, nextWaiting, type AudienceContact, type AudienceQuery } from './audience.ts';
import { renderBroadcastMessage, variantOf } from './broadcast-content.ts';
import type { BroadcastRow } from './broadcasts.ts';
import { markSent } from './broadcast-sent.ts';
import * as state from './broadcast-state.ts';
import { endCanceled } from './end-broadcast.ts';
import { SENDS_FROM_DOMAIN } from '../domains/domains.ts';

/** A broadcast message's kind: `broadcast.<topic>` (spec), or `broadcast` for one of Resend's without a topic. */
export const broadcastKind = (topic: string | null): string => (topic === null ? 'broadcast' : `broadcast.${topic}`);

export const FAN_OUT_BATCH = 500;
/** A batch stops taking contacts once its messages hold this many bytes (UTF-8). */
export const FAN_OUT_BATCH_BYTES = 64 * 1024 * 1024;

interface Recipient {
  contact: string;
  state: 'queued' | 'waiting' | 'skipped';
  variant: 'A' | 'B' | null;
  message: { id: string; email: string; subject: string; html: string | null; text: string | null } | null;
  reason: string | null;
}

/** Whether a contact is in the A/B test's share (`percent` of the audience, by broadcast and contact id). */
const inTestShare = (b: BroadcastRow, contactId: string): boolean =>
  createHash('md5').update(`${b.id}:${contactId}`).digest().readUInt32BE(0) % 100 < b.ab_test!.percent;

export class FanOut {
  private readonly pg: Pool;
  private readonly outbox: MessageOutbox;
  /** The length of a minute of an A/B test's wait (MAIL_AB_MINUTE_MS). */
  private readonly minuteMs: number;
  /** Contacts per batch (MAIL_FANOUT_BATCH). */
  private readonly batchSize: number;
  /** Bytes of messages per batch (MAIL_FANOUT_BATCH_BYTES). */
  private readonly batchBytes: number;

  constructor(
    pg: Pool,
    outbox: MessageOutbox,
    minuteMs = 60_000,
    batchSize = FAN_OUT_BATCH,
    batchBytes = FAN_OUT_BATCH_BYTES,
  ) {
    this.pg = pg;
    this.outbox = outbox;
    this.minuteMs = minuteMs;
    this.batchSize = batchSize;
    this.batchBytes = batchBytes;
  }

  /**
   * Runs the fan-out of a sending broadcast to its end, from where it stands: the audience phase
   * (then testing, or sent), or the rest after an A/B decision (then sent). Stops when the
   * broadcast is no longer sending (canceled).
   */
  async run(broadcastId: string): Promise<void> {
    let publishing: Promise<void> = Promise.resolve();
    try {
      for (;;) {
        const step = await withTransaction(this.pg, (db) => this.batch(db, broadcastId));
        // One publication in flight while the next batch is written.
        await publishing;
        // publish() never throws: what it cannot publish is left to the outbox relay.
        publishing = this.outbox.publish(step.messageIds);
        if (step.done) break;
      }
    } finally {
      await publishing;
    }
  }

  /** One batch; `done` when there is nothing more to do now. */
  private async batch(db: PoolClient, broadcastId: string): Promise<{ messageIds: string[]; done: boolean }> {
    const b = await state.lock(db, broadcastId);
    if (!b || b.status !== 'sending') return { messageIds: [], done: true };
    const query = await this.audienceOf(db, b);
    if (typeof query === 'string') {
      await endCanceled(db, b.id, query);
      return { messageIds: [], done: true };
    }
    if (b.phase === 'rest') return this.restBatch(db, b, query);
    const contacts = await nextContacts(db, query, b.cursor, this.batchSize);
    const { recipients, taken } = takeWithin(contacts, this.batchBytes, (c) => (c.suppressed ? null : this.recipientOf(b, c)));
    const messageIds = await this.write(db, b, recipients);
    await this.countRecipients(db, b, recipients);
    const count = (state: Recipient['state']) => recipients.filter((r) => r.state === state).length;
    const testMessages = b.ab_test ? count('queued') : 0;
    const last = taken === contacts.length && contacts.length < this.batchSize;
    const eligible = b.eligible + recipients.length;
    await state.audienceBatchWritten(db, b.id, {
      cursor: contacts[taken - 1]?.id ?? b.cursor, eligible, suppressed: taken - recipients.length,
      queued: count('queued') + count('waiting'), skipped: count('skipped'), testMessages,
    });
    if (last) await this.endAudience(db, b, eligible);
    return { messageIds, done: last };
  }

  /** After the last batch of the audience: testing until the decision, or sent. */
  private async endAudience(db: PoolClient, b: BroadcastRow, eligible: number): Promise<void> {
    if (eligible === 0) {
      const reason = b.parent_id
        ? 'Nobody is eligible: every recipient of the original opened it, or is no longer subscribed to the topic, in the segment, or deliverable.'
        : 'Nobody is eligible: no contact is subscribed to the topic (and in the segment) without being on the suppression list.';
      await markSent(db, b.id, reason);
    } else if (b.ab_test) {
      await state.testing(db, b.id, b.ab_test.wait_minutes * this.minuteMs);
    } else {
      await this.finish(db, b.id);
    }
  }

  /**
   * Every recipient has its message, or was skipped: sent. When none got one (the subject renders
   * empty for everyone, say), nothing went out: canceled, with the first recipient's reason.
   */
  private async finish(db: PoolClient, broadcastId: string): Promise<void> {
    const { rows } = await db.query<{ queued: number; skipped: number; first: string | null }>(
      `SELECT queued, skipped, (SELECT reason FROM mail_broadcast_recipients WHERE broadcast_id = $1 AND state = 'skipped' LIMIT 1) AS first FROM mail_broadcasts WHERE id = $1`,
      [broadcastId],
    );
    const { queued, skipped, first } = rows[0]!;
    if (queued === 0 && skipped > 0) {
      await endCanceled(db, broadcastId, `No message could be made: all ${skipped} eligible recipients were skipped, the first because ${first ?? 'of an unknown reason'}. Fix the content (or the contacts) and create a new broadcast.`);
      return;
    }
    await markSent(db, broadcastId);
  }

  /**
   * After the A/B decision: the recipients waiting for it get the winner's subject, if they are still
   * eligible by the audience's own rule (audience.ts); the others, and the deleted, are skipped.
   */
  private async restBatch(db: PoolClient, b: BroadcastRow, query: AudienceQuery): Promise<{ messageIds: string[]; done: boolean }> {
    const waiting = await nextWaiting(db, query, b.id, b.cursor, this.batchSize);
    const subject = b.ab_winner === 'B' ? b.subject_b! : b.subject;
    const skip = (contact: string, reason: string): Recipient => ({ contact, state: 'skipped', variant: null, message: null, reason });
    const { recipients, taken } = takeWithin(waiting, this.batchBytes, (w) => {
      if (!w.contact) return skip(w.contactId, 'the contact was deleted while the A/B test ran');
      if (!w.eligible || w.contact.suppressed) return skip(w.contactId, 'no longer eligible when the winner was chosen (unsubscribed, out of the topic or the segment, or suppressed)');
      return this.made(b, w.contact, subject, null);
    });
    const messageIds = await this.write(db, b, recipients);
    const skipped = recipients.filter((r) => r.state === 'skipped').length;
    const last = taken === waiting.length && waiting.length < this.batchSize;
    await state.restBatchWritten(db, b.id, waiting[taken - 1]?.contactId ?? b.cursor, skipped);
    if (last) await this.finish(db, b.id);
    return { messageIds, done: last };
  }

  /** What one contact of the audience phase becomes. */
  private recipientOf(b: BroadcastRow, c: AudienceContact): Recipient {
    if (b.ab_test) {
      if (!inTestShare(b, c.id)) return { contact: c.id, state: 'waiting', variant: null, message: null, reason: null };
      const variant = variantOf(c.id);
      return this.made(b, c, variant === 'B' ? b.subject_b! : b.subject, variant);
    }
    if (b.subject_b) {
      const variant = variantOf(c.id);
      return this.made(b, c, variant === 'B' ? b.subject_b : b.subject, variant);
    }
    return this.made(b, c, b.subject, null);
  }

  private made(b: BroadcastRow, c: AudienceContact, subject: string, variant: 'A' | 'B' | null): Recipient {
    try {
      const m = renderBroadcastMessage(b, subject, c);
      return { contact: c.id, state: 'queued', variant, message: { id: randomUUID(), email: c.email, ...m }, reason: null };
    } catch (err) {
      return { contact: c.id, state: 'skipped', variant, message: null, reason: (err as Error).message.slice(0, 300) };
    }
  }

  /** Writes the batch's messages (with their outbox rows) and recipient rows; the ids of the messages. */
  private async write(db: PoolClient, b: BroadcastRow, recipients: Recipient[]): Promise<string[]> {
    const made = recipients.filter((r) => r.message !== null);
    await storeFanOut(
      db,
      { organizationId: b.organization_id, kind: broadcastKind(b.topic), fromAddress: b.from_address, fromDomain: b.from_domain, replyTo: b.reply_to ? [b.reply_to] : [],
        tags: [{ name: 'broadcast_id', value: b.id }], topicId: b.topic },
      made.map((r) => ({ ...r.message!, idempotencyKey: `broadcast:${b.id}:${r.contact}` })),
    );
    await db.query(
      `INSERT INTO mail_broadcast_recipients (broadcast_id, contact_id, state, variant, message_id, reason)
       SELECT $1, * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::uuid[], $6::text[])
       ON CONFLICT (broadcast_id, contact_id) DO UPDATE SET state = EXCLUDED.state, message_id = EXCLUDED.message_id, reason = EXCLUDED.reason
         WHERE mail_broadcast_recipients.state = 'waiting'`,
      [b.id, recipients.map((r) => r.contact), recipients.map((r) => r.state), recipients.map((r) => r.variant), recipients.map((r) => r.message?.id ?? null), recipients.map((r) => r.reason)],
    );
    return made.map((r) => r.message!.id);
  }

  /** The report's recipients per variant (broadcast-report.ts), with the batch. */
  private async countRecipients(db: PoolClient, b: BroadcastRow, recipients: Recipient[]): Promise<void> {
    const perVariant = new Map<string, number>();
    for (const r of recipients) perVariant.set(r.variant ?? '', (perVariant.get(r.variant ?? '') ?? 0) + 1);
    if (perVariant.size === 0) return;
    await db.query(
      `INSERT INTO mail_broadcast_counts (broadcast_id, variant, flag, n) SELECT $1, v, 'recipients', n FROM unnest($2::text[], $3::bigint[]) AS t(v, n)
       ON CONFLICT (broadcast_id, variant, flag) DO UPDATE SET n = mail_broadcast_counts.n + EXCLUDED.n`,
      [b.id, [...perVariant.keys()], [...perVariant.values()]],
    );
  }

  /** The audience's query, or why there can be none (the broadcast then ends with that reason). */
  private async audienceOf(db: PoolClient, b: BroadcastRow): Promise<AudienceQuery | string> {
    const { rows: domains } = await db.query(`SELECT 1 FROM mail_domains WHERE organization_id = $1 AND name = $2 AND ${SENDS_FROM_DOMAIN}`, [b.organization_id, b.from_domain]);
    if (domains.length === 0) return `The sending domain ${b.from_domain} is no longer verified; verify it again and send a new broadcast.`;
    let topic: { id: string; default_subscription: string } | null = null;
    if (b.topic !== null) {
      const { rows: topics } = await db.query<{ id: string; default_subscription: string }>('SELECT id, default_subscription FROM mail_topics WHERE organization_id = $1 AND slug = $2', [b.organization_id, b.topic]);
      if (!topics[0]) return `The topic ${b.topic} was deleted; nobody can be subscribed to it.`;
      topic = topics[0];
    }
    let segment = null;
    if (b.segment_id) {
      const { rows: segments } = await db.query<{ filter: unknown }>('SELECT filter FROM mail_segments WHERE organization_id = $1 AND id = $2', [b.organization_id, b.segment_id]);
      if (!segments[0]) return `The segment ${b.segment_id} was deleted; send a new broadcast to another segment or to the whole topic.`;
      // A filter stored before the checks of today (segment-filter.ts) would make Postgres refuse the audience's query.
      const parsed = parseSegmentFilter(segments[0].filter);
      if (!parsed.ok) {
        const e = parsed.errors[0]!;
        return `The segment ${b.segment_id} has a filter that is not valid (${e.path || '/'}: ${e.message}); correct it with PATCH /api/v1/segments/${b.segment_id}, then create a new broadcast.`;
      }
      segment = { id: b.segment_id, filter: parsed.filter };
    }
    return { organizationId: b.organization_id, topic: topic && { id: topic.id, defaultSubscription: topic.default_subscription }, segment, parentId: b.parent_id, declaredFallbacks: b.resend_face };
  }
}

/**
 * Makes the recipients of `items` in order (null: none, a suppressed contact) until their messages
 * hold `bytes`, and at least one; how many items it took.
 */
function takeWithin<T>(items: T[], bytes: number, make: (item: T) => Recipient | null): { recipients: Recipient[]; taken: number } {
  const recipients: Recipient[] = [];
  let size = 0;
  let taken = 0;
  for (const item of items) {
    if (size >= bytes) break;
    const r = make(item);
    taken++;
    if (!r) continue;
    recipients.push(r);
    if (r.message) size += Buffer.byteLength(r.message.subject) + Buffer.byteLength(r.message.html ?? '') + Buffer.byteLength(r.message.text ?? '');
  }
  return { recipients, taken };
}
