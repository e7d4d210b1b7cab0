// The one writer of a broadcast's row (mail_broadcasts) and of its durable timers
// (mail_broadcast_jobs): every change is a named transition here (spec: States and
// transitions), as listmonk routes every campaign change through one function.
// Each runs in the caller's transaction, which holds the row locked (lock), so the
// API's transitions, the actor and the fan-out's batches take turns, and a batch's
// counters commit with its messages. Whether a transition is allowed is the
// caller's check, made on the locked row.
import type { PoolClient } from 'pg';
import type { BroadcastRow, NewBroadcast } from './broadcasts.ts';

type Command = 'start' | 'decide';

/** The broadcast's row, locked until the transaction ends; undefined if there is none. */
export async function lock(db: PoolClient, broadcastId: string): Promise<BroadcastRow | undefined> {
  const { rows } = await db.query<BroadcastRow>('SELECT * FROM mail_broadcasts WHERE id = $1 FOR UPDATE', [broadcastId]);
  return rows[0];
}

/** A new broadcast, draft or scheduled (with its start job); its id. */
export async function create(db: PoolClient, organizationId: string, b: NewBroadcast): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO mail_broadcasts (organization_id, name, status, from_address, from_domain, topic, segment_id, template_id, template_slug, template_version,
                                  subject, html, text_body, subject_b, ab_test, reply_to, preview_text, scheduled_at, parent_id, resend_face)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) RETURNING id`,
    [organizationId, b.name, b.scheduled_at ? 'scheduled' : b.send_now ? 'sending' : 'draft', b.from_address, b.from_domain, b.topic, b.segment_id, b.template?.id ?? null, b.template?.slug ?? null,
      b.template?.version ?? null, b.subject, b.html, b.text, b.subject_b, b.ab_test, b.reply_to, b.preview_text, b.scheduled_at, b.parent_id, b.resend_face ?? false],
  );
  const id = rows[0]!.id;
  if (b.scheduled_at) await setJob(db, id, 'start', b.scheduled_at);
  else if (b.send_now) await setJob(db, id, 'start', new Date());
  return id;
}

/** What a draft's edit may change (Resend's broadcasts.update), already checked by the caller. */
export interface DraftChange {
  name?: string;
  from_address?: string;
  from_domain?: string;
  topic?: string | null;
  segment_id?: string;
  subject?: string;
  html?: string | null;
  text?: string | null;
  reply_to?: string | null;
  preview_text?: string | null;
}

/** A draft edited: the fields given change (a locked draft: the caller checked its status). */
export async function editDraft(db: PoolClient, broadcastId: string, change: DraftChange): Promise<void> {
  const columns: Record<keyof DraftChange, string> = {
    name: 'name', from_address: 'from_address', from_domain: 'from_domain', topic: 'topic', segment_id: 'segment_id',
    subject: 'subject', html: 'html', text: 'text_body', reply_to: 'reply_to', preview_text: 'preview_text',
  };
  const given = (Object.keys(columns) as (keyof DraftChange)[]).filter((k) => change[k] !== undefined);
  if (given.length === 0) return;
  // Column names come from the fixed map above; values are parameters.
  await db.query(
    `UPDATE mail_broadcasts SET ${given.map((k, i) => `${columns[k]} = $${i + 2}`).join(', ')}, updated_at = now() WHERE id = $1`,
    [broadcastId, ...given.map((k) => change[k])],
  );
}

/** A draft removed (Resend's broadcasts.remove): it has no jobs and no recipients yet. */
export async function removeDraft(db: PoolClient, broadcastId: string): Promise<void> {
  await db.query('DELETE FROM mail_broadcasts WHERE id = $1', [broadcastId]);
}

/** A copy of a broadcast as a new draft (Resend's broadcasts.duplicate): its content, sender, topic and segment; its id. */
export async function duplicate(db: PoolClient, broadcastId: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO mail_broadcasts (organization_id, name, status, from_address, from_domain, topic, segment_id, template_id, template_slug, template_version,
                                  subject, html, text_body, subject_b, ab_test, reply_to, preview_text, resend_face)
     SELECT organization_id, name, 'draft', from_address, from_domain, topic, segment_id, template_id, template_slug, template_version,
            subject, html, text_body, subject_b, ab_test, reply_to, preview_text, resend_face
       FROM mail_broadcasts WHERE id = $1 RETURNING id`,
    [broadcastId],
  );
  return rows[0]!.id;
}

/** A resend of `parentId`: its content, topic and segment, without subject B, draft or scheduled; its id. */
export async function createResend(db: PoolClient, parentId: string, change: { subject?: string; scheduled_at?: Date }): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO mail_broadcasts (organization_id, name, status, from_address, from_domain, topic, segment_id, template_id, template_slug, template_version,
                                  subject, html, text_body, reply_to, preview_text, scheduled_at, parent_id, resend_face)
     SELECT organization_id, name, $2, from_address, from_domain, topic, segment_id, template_id, template_slug, template_version,
            coalesce($3, subject), html, text_body, reply_to, preview_text, $4, id, resend_face
       FROM mail_broadcasts WHERE id = $1 RETURNING id`,
    [parentId, change.scheduled_at ? 'scheduled' : 'draft', change.subject ?? null, change.scheduled_at ?? null],
  );
  const id = rows[0]!.id;
  if (change.scheduled_at) await setJob(db, id, 'start', change.scheduled_at);
  return id;
}

/** Sent (POST /:id/send): scheduled for `at`, or sending now; its start job set either way. */
export async function send(db: PoolClient, broadcastId: string, at: Date | null): Promise<void> {
  await db.query('UPDATE mail_broadcasts SET status = $2, scheduled_at = $3, updated_at = now() WHERE id = $1', [broadcastId, at ? 'scheduled' : 'sending', at]);
  await setJob(db, broadcastId, 'start', at ?? new Date());
}

/** Canceled by its sender (POST /:id/cancel): no reason, its pending jobs removed. */
export async function cancel(db: PoolClient, broadcastId: string): Promise<void> {
  await db.query("UPDATE mail_broadcasts SET status = 'canceled', finished_at = now(), updated_at = now() WHERE id = $1", [broadcastId]);
  await deleteJobs(db, broadcastId);
}

/** POST /:id/decide: the A/B decision due now; the status stays testing until the winner is written. */
export async function queueDecision(db: PoolClient, broadcastId: string): Promise<void> {
  await setJob(db, broadcastId, 'decide', new Date());
}

/**
 * The actor's command: a sending broadcast stays sending, a scheduled one whose time has come
 * (`earlyMs` before it at most) starts; true when the fan-out should run.
 */
export async function startSending(db: PoolClient, broadcastId: string, command: Command, earlyMs: number): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE mail_broadcasts SET status = 'sending', updated_at = now()
      WHERE id = $1 AND (status = 'sending' OR ($3 = 'start' AND status = 'scheduled' AND scheduled_at <= now() + make_interval(secs => $2::double precision / 1000)))
     RETURNING status`,
    [broadcastId, earlyMs, command],
  );
  return rows.length > 0;
}

/** What one batch of the audience phase added. */
export interface AudienceBatch {
  /** The last contact id taken (the next batch starts after it). */
  cursor: string | null;
  eligible: number;
  suppressed: number;
  /** Queued or waiting for the A/B winner. */
  queued: number;
  skipped: number;
  /** Messages of the A/B test's share. */
  testMessages: number;
}

/** An audience batch written: the counters and the cursor, in the batch's transaction. */
export async function audienceBatchWritten(db: PoolClient, broadcastId: string, batch: AudienceBatch): Promise<void> {
  await db.query(
    `UPDATE mail_broadcasts SET fanned_out = true, started_at = coalesce(started_at, now()), cursor = $2, eligible = $3, suppressed = suppressed + $4,
            queued = queued + $5, skipped = skipped + $6, test_share = CASE WHEN ab_test IS NULL THEN NULL ELSE coalesce(test_share, 0) + $7 END, updated_at = now()
      WHERE id = $1`,
    [broadcastId, batch.cursor, batch.eligible, batch.suppressed, batch.queued, batch.skipped, batch.testMessages],
  );
}

/** A batch of the rest written: the cursor, and the waiting recipients it skipped moved from queued to skipped. */
export async function restBatchWritten(db: PoolClient, broadcastId: string, cursor: string | null, skipped: number): Promise<void> {
  await db.query('UPDATE mail_broadcasts SET cursor = $2, queued = queued - $3, skipped = skipped + $3, updated_at = now() WHERE id = $1', [broadcastId, cursor, skipped]);
}

/** The A/B test's share is out: testing, with its decision due after the wait (a decision already queued stays). */
export async function testing(db: PoolClient, broadcastId: string, waitMs: number): Promise<void> {
  await db.query("UPDATE mail_broadcasts SET status = 'testing', updated_at = now() WHERE id = $1", [broadcastId]);
  await db.query(
    `INSERT INTO mail_broadcast_jobs (broadcast_id, command, run_at) VALUES ($1, 'decide', now() + make_interval(secs => $2::double precision / 1000))
     ON CONFLICT (broadcast_id, command) DO NOTHING`,
    [broadcastId, waitMs],
  );
}

/** The winner written: sending the rest, from its first waiting recipient. */
export async function winnerDecided(db: PoolClient, broadcastId: string, winner: 'A' | 'B'): Promise<void> {
  await db.query(
    "UPDATE mail_broadcasts SET ab_winner = $2, ab_decided_at = now(), status = 'sending', phase = 'rest', cursor = NULL, updated_at = now() WHERE id = $1",
    [broadcastId, winner],
  );
  await db.query("DELETE FROM mail_broadcast_jobs WHERE broadcast_id = $1 AND command = 'decide'", [broadcastId]);
}

/**
 * Sent, with `reason` if given; the row as it now stands. Only through markSent (broadcast-sent.ts),
 * which records the broadcast.sent event with it.
 */
export async function sent(db: PoolClient, broadcastId: string, reason: string | null): Promise<BroadcastRow | undefined> {
  const { rows } = await db.query<BroadcastRow>(
    "UPDATE mail_broadcasts SET status = 'sent', reason = coalesce($2, reason), finished_at = now(), updated_at = now() WHERE id = $1 RETURNING *",
    [broadcastId, reason],
  );
  return rows[0];
}

/**
 * Ended by the worker (end-broadcast.ts): canceled with `reason`, the `unwaited` recipients that
 * were waiting for the A/B winner moved from queued to skipped, its pending jobs removed.
 */
export async function canceledWithReason(db: PoolClient, broadcastId: string, reason: string, unwaited: number): Promise<void> {
  await db.query(
    `UPDATE mail_broadcasts SET status = 'canceled', reason = $2, fanned_out = true, queued = queued - $3, skipped = skipped + $3, finished_at = now(), updated_at = now()
      WHERE id = $1`,
    [broadcastId, reason, unwaited],
  );
  await deleteJobs(db, broadcastId);
}

/** Takes (deletes) up to `limit` due jobs that no other transaction holds, with their broadcasts' organizations. */
export async function takeDueJobs(db: PoolClient, limit: number): Promise<{ broadcast_id: string; command: Command; organization_id: string }[]> {
  const { rows } = await db.query<{ broadcast_id: string; command: Command; organization_id: string }>(
    `DELETE FROM mail_broadcast_jobs j USING mail_broadcasts b
      WHERE b.id = j.broadcast_id AND (j.broadcast_id, j.command) IN
            (SELECT broadcast_id, command FROM mail_broadcast_jobs WHERE run_at <= now() ORDER BY run_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING j.broadcast_id, j.command, b.organization_id`,
    [limit],
  );
  return rows;
}

/** Sets (or moves) the broadcast's job for `command` to `at`. */
async function setJob(db: PoolClient, broadcastId: string, command: Command, at: Date): Promise<void> {
  await db.query(
    'INSERT INTO mail_broadcast_jobs (broadcast_id, command, run_at) VALUES ($1, $2, $3) ON CONFLICT (broadcast_id, command) DO UPDATE SET run_at = EXCLUDED.run_at',
    [broadcastId, command, at],
  );
}

async function deleteJobs(db: PoolClient, broadcastId: string): Promise<void> {
  await db.query('DELETE FROM mail_broadcast_jobs WHERE broadcast_id = $1', [broadcastId]);
}
