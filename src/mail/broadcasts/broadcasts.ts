// Broadcasts as stored, and the transitions the API makes (spec: States and
// transitions). Each transition locks the broadcast's row and checks its state in
// one transaction with its change, which broadcast-state.ts writes (the one writer
// of a broadcast's row and jobs), so a send, a cancel and the worker's fan-out
// batches take turns. A refused transition changes nothing and says why; the
// route decides the answer (broadcast-routes.ts).
import type { PoolClient } from 'pg';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import type { DomainScope } from '../domains/domains.ts';
import { page, type Page } from '../http/pagination.ts';
import * as state from './broadcast-state.ts';

export const BROADCAST_STATUSES = ['draft', 'scheduled', 'sending', 'testing', 'sent', 'canceled'] as const;
export type BroadcastStatus = (typeof BROADCAST_STATUSES)[number];

export interface AbTest {
  percent: number;
  wait_minutes: number;
  metric: 'opens' | 'clicks';
}

export interface BroadcastRow {
  id: string;
  organization_id: string;
  name: string;
  status: BroadcastStatus;
  from_address: string;
  from_domain: string;
  /** The topic's slug; null for a broadcast of Resend's without one (its segment's subscribed contacts). */
  topic: string | null;
  segment_id: string | null;
  /** Made at Resend's root paths: renders Resend's variables and declared property fallbacks. */
  resend_face: boolean;
  template_id: string | null;
  template_slug: string | null;
  template_version: number | null;
  subject: string;
  html: string | null;
  text_body: string | null;
  subject_b: string | null;
  ab_test: AbTest | null;
  ab_winner: 'A' | 'B' | null;
  ab_decided_at: Date | null;
  parent_id: string | null;
  reply_to: string | null;
  preview_text: string | null;
  scheduled_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  fanned_out: boolean;
  eligible: number;
  suppressed: number;
  queued: number;
  skipped: number;
  test_share: number | null;
  reason: string | null;
  phase: 'audience' | 'rest';
  cursor: string | null;
  created_at: Date;
  updated_at: Date;
}

/** What a new broadcast is made of (checked by the route). */
export interface NewBroadcast {
  name: string;
  from_address: string;
  from_domain: string;
  topic: string | null;
  segment_id: string | null;
  /** True for Resend's root paths; the spec's /api/v1 leaves it out (false). */
  resend_face?: boolean;
  template: { id: string; slug: string; version: number } | null;
  subject: string;
  html: string | null;
  text: string | null;
  subject_b: string | null;
  ab_test: AbTest | null;
  reply_to: string | null;
  preview_text: string | null;
  scheduled_at: Date | null;
  /** Sending at once (Resend's create with send: true and no time): made as a send would leave it, in the same transaction, never a draft first. */
  send_now?: boolean;
  parent_id: string | null;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

/** The broadcast object of the spec. */
export function toBroadcast(r: BroadcastRow) {
  return {
    object: 'broadcast' as const,
    id: r.id,
    name: r.name,
    status: r.status,
    from: r.from_address,
    domain: r.from_domain,
    topic: r.topic,
    segment_id: r.segment_id,
    template: r.template_id ? { id: r.template_id, slug: r.template_slug!, version: r.template_version! } : null,
    subject: r.subject,
    subject_b: r.subject_b,
    ab_test: r.ab_test,
    ab_winner: r.ab_winner,
    ab_decided_at: iso(r.ab_decided_at),
    parent_id: r.parent_id,
    reply_to: r.reply_to,
    preview_text: r.preview_text,
    scheduled_at: iso(r.scheduled_at),
    started_at: iso(r.started_at),
    finished_at: iso(r.finished_at),
    stats: r.fanned_out
      ? {
          eligible: r.eligible,
          suppressed: r.suppressed,
          queued: r.queued,
          skipped: r.skipped,
          ...(r.test_share !== null ? { testShare: r.test_share } : {}),
          ...(r.reason !== null ? { reason: r.reason } : {}),
        }
      : null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

/** Why a transition was refused. */
export type BroadcastRefusal =
  | { reason: 'not_found' }
  | { reason: 'not_schedulable' | 'not_cancelable' | 'not_testing' | 'not_editable'; status: BroadcastStatus }
  | { reason: 'not_resendable'; status: BroadcastStatus; isResend: boolean }
  | { reason: 'subject_from_template' }
  | { reason: 'topic_required'; apiV1: boolean }
  | { reason: 'resend_exists'; resendId: string }
  | { reason: 'resend_too_early'; waitHours: number; earliest: Date };

/** The broadcast after a transition, or why it was refused. */
export type Transition = { ok: true; broadcast: BroadcastRow } | ({ ok: false } & BroadcastRefusal);

const SELECT = 'SELECT b.* FROM mail_broadcasts b';

export const LIST_LIMIT = 50;

export class Broadcasts {
  private readonly pg: Pool;
  /** Resend rule 5: hours after the parent finished before a child may be sent (0: none). */
  private readonly resendWaitHours: number;

  constructor(
    pg: Pool,
    resendWaitHours: number,
  ) {
    this.pg = pg;
    this.resendWaitHours = resendWaitHours;
  }

  async create(organizationId: string, b: NewBroadcast): Promise<BroadcastRow> {
    return withTransaction(this.pg, async (db) => {
      const id = await state.create(db, organizationId, b);
      return (await this.read(db, organizationId, id, null))!;
    });
  }

  /** The broadcast, if the organization has it and the key may see its domain. */
  get(organizationId: string, id: string, scope: DomainScope): Promise<BroadcastRow | undefined> {
    return this.read(this.pg, organizationId, id, scope);
  }

  /** A page of the broadcasts the key may see, newest first (`limit` up to LIST_LIMIT, `cursor` from the previous page). */
  list<T>(organizationId: string, scope: DomainScope, request: { limit?: number; cursor?: string }, map: (row: BroadcastRow) => T): Promise<Page<T>> {
    return page(this.pg, {
      select: `${SELECT} WHERE b.organization_id = $1 AND ($2::text[] IS NULL OR b.from_domain = ANY($2))`,
      params: [organizationId, scope],
      limit: request.limit ?? LIST_LIMIT,
      ...(request.cursor === undefined ? {} : { cursor: request.cursor }),
    }, map);
  }

  /** POST /:id/send: scheduled for `at`, or sending now (the worker starts it within a second). */
  send(organizationId: string, id: string, scope: DomainScope, at: Date | null): Promise<Transition> {
    return this.transition(organizationId, id, scope, async (db, b) => {
      if (b.status !== 'draft' && b.status !== 'scheduled') return { reason: 'not_schedulable', status: b.status };
      const early = b.parent_id ? await this.resendTooEarly(db, b.parent_id, at ?? new Date()) : undefined;
      if (early) return early;
      await state.send(db, b.id, at);
    });
  }

  /** Resend's update: a draft's fields changed (checked by the caller); 409 not_editable once it left draft. */
  edit(organizationId: string, id: string, scope: DomainScope, change: state.DraftChange): Promise<Transition> {
    return this.transition(organizationId, id, scope, async (db, b) => {
      if (b.status !== 'draft') return { reason: 'not_editable', status: b.status };
      // Checked under the lock, against what the draft will be: an /api/v1 broadcast keeps its topic
      // (the spec's topic is a string), and none may lose both topic and segment, whose fan-out would
      // reach every subscribed contact without any topic's opt-outs.
      const topic = change.topic !== undefined ? change.topic : b.topic;
      const segment = change.segment_id !== undefined ? change.segment_id : b.segment_id;
      if (topic === null && (!b.resend_face || segment === null)) return { reason: 'topic_required', apiV1: !b.resend_face };
      await state.editDraft(db, b.id, change);
    });
  }

  /** Resend's remove: a draft deleted; 409 not_editable once it left draft. The draft as it was. */
  async remove(organizationId: string, id: string, scope: DomainScope): Promise<Transition> {
    return withTransaction(this.pg, async (db): Promise<Transition> => {
      const b = await this.lock(db, organizationId, id, scope);
      if (!b) return { ok: false, reason: 'not_found' };
      if (b.status !== 'draft') return { ok: false, reason: 'not_editable', status: b.status };
      await state.removeDraft(db, b.id);
      return { ok: true, broadcast: b };
    });
  }

  /** Resend's duplicate: a new draft with the broadcast's content, sender, topic and segment. */
  async duplicate(organizationId: string, id: string, scope: DomainScope): Promise<Transition> {
    const made = await withTransaction(this.pg, async (db) => {
      const b = await this.lock(db, organizationId, id, scope);
      return b ? state.duplicate(db, b.id) : undefined;
    });
    return made ? this.after(organizationId, made, scope) : { ok: false, reason: 'not_found' };
  }

  /** POST /:id/cancel: canceled, its pending jobs removed; a fan-out in progress stops before its next batch. */
  cancel(organizationId: string, id: string, scope: DomainScope): Promise<Transition> {
    return this.transition(organizationId, id, scope, async (db, b) => {
      if (b.status === 'sent' || b.status === 'canceled') return { reason: 'not_cancelable', status: b.status };
      await state.cancel(db, b.id);
    });
  }

  /** POST /:id/decide: the decision is queued at once; the status stays testing until the worker writes the winner. */
  decide(organizationId: string, id: string, scope: DomainScope): Promise<Transition> {
    return this.transition(organizationId, id, scope, async (db, b) => {
      if (b.status !== 'testing') return { reason: 'not_testing', status: b.status };
      await state.queueDecision(db, b.id);
    });
  }

  /**
   * POST /:id/resend (spec: Resend rules): a child of a sent broadcast, copying its content,
   * topic and segment, without subject B, for the parent's non-openers at its fan-out.
   */
  async resend(organizationId: string, id: string, scope: DomainScope, change: { subject?: string; scheduled_at?: Date }): Promise<Transition> {
    const made = await withTransaction(this.pg, async (db): Promise<{ childId: string } | BroadcastRefusal> => {
      const parent = await this.lock(db, organizationId, id, scope);
      if (!parent) return { reason: 'not_found' };
      if (parent.status !== 'sent' || parent.parent_id) return { reason: 'not_resendable', status: parent.status, isResend: parent.parent_id !== null };
      if (change.subject !== undefined && parent.template_id) return { reason: 'subject_from_template' };
      const { rows: live } = await db.query<{ id: string }>("SELECT id FROM mail_broadcasts WHERE parent_id = $1 AND status <> 'canceled'", [parent.id]);
      if (live[0]) return { reason: 'resend_exists', resendId: live[0].id };
      const early = change.scheduled_at ? await this.resendTooEarly(db, parent.id, change.scheduled_at) : undefined;
      if (early) return early;
      return { childId: await state.createResend(db, parent.id, change) };
    });
    return 'reason' in made ? { ok: false, ...made } : this.after(organizationId, made.childId, scope);
  }

  /** Resend rule 5: a send time under the wait after the parent finished is refused. */
  private async resendTooEarly(db: PoolClient, parentId: string, at: Date): Promise<BroadcastRefusal | undefined> {
    if (this.resendWaitHours === 0) return undefined;
    const { rows } = await db.query<{ finished_at: Date | null }>('SELECT finished_at FROM mail_broadcasts WHERE id = $1', [parentId]);
    const finished = rows[0]?.finished_at;
    if (!finished) return undefined;
    const earliest = new Date(finished.getTime() + this.resendWaitHours * 3_600_000);
    return at < earliest ? { reason: 'resend_too_early', waitHours: this.resendWaitHours, earliest } : undefined;
  }

  /** Locks the broadcast and makes `change`, unless it refuses (having written nothing). */
  private async transition(organizationId: string, id: string, scope: DomainScope, change: (db: PoolClient, b: BroadcastRow) => Promise<BroadcastRefusal | void>): Promise<Transition> {
    const refusal = await withTransaction(this.pg, async (db): Promise<BroadcastRefusal | void> => {
      const b = await this.lock(db, organizationId, id, scope);
      if (!b) return { reason: 'not_found' };
      return change(db, b);
    });
    return refusal ? { ok: false, ...refusal } : this.after(organizationId, id, scope);
  }

  /** The broadcast as the transition left it (or not found, deleted since). */
  private async after(organizationId: string, id: string, scope: DomainScope): Promise<Transition> {
    const broadcast = await this.get(organizationId, id, scope);
    return broadcast ? { ok: true, broadcast } : { ok: false, reason: 'not_found' };
  }

  private async lock(db: PoolClient, organizationId: string, id: string, scope: DomainScope): Promise<BroadcastRow | undefined> {
    const { rows } = await db.query<BroadcastRow>(
      'SELECT * FROM mail_broadcasts WHERE organization_id = $1 AND id = $2 AND ($3::text[] IS NULL OR from_domain = ANY($3)) FOR UPDATE',
      [organizationId, id, scope],
    );
    return rows[0];
  }

  private async read(db: Pool | PoolClient, organizationId: string, id: string, scope: DomainScope): Promise<BroadcastRow | undefined> {
    const { rows } = await db.query<BroadcastRow>(`${SELECT} WHERE b.organization_id = $1 AND b.id = $2 AND ($3::text[] IS NULL OR b.from_domain = ANY($3))`, [organizationId, id, scope]);
    return rows[0];
  }
}
