// Subscription topics: what an organization sends broadcasts about, and each
// contact's choice for them (the API's /topics; in code they are "subscription
// topics", since a bare "topic" is a Kafka topic). A contact with no explicit
// choice follows the topic's default: opt_in topics include everybody until they
// opt out; opt_out topics include nobody until they opt in.
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { violatedForeignKey } from '../../platform/postgres/refused-value.ts';
import { page, type Page } from '../http/pagination.ts';

/** Thrown inside chooseAll's transaction to roll it back. */
class ChoicesRefused extends Error {
  readonly reason: 'topic_gone' | 'contact_gone';

  constructor(reason: 'topic_gone' | 'contact_gone') {
    super(reason);
    this.reason = reason;
  }
}

export const DEFAULT_SUBSCRIPTIONS = ['opt_in', 'opt_out'] as const;
export type DefaultSubscription = (typeof DEFAULT_SUBSCRIPTIONS)[number];

export interface SubscriptionTopicRow {
  id: string;
  organization_id: string;
  slug: string;
  name: string;
  default_subscription: DefaultSubscription;
  /** Resend's description of the topic (set at the root paths). */
  description: string | null;
  created_at: Date;
  updated_at: Date;
}

export const toSubscriptionTopic = (r: SubscriptionTopicRow) => ({
  object: 'topic' as const,
  id: r.id,
  slug: r.slug,
  name: r.name,
  default_subscription: r.default_subscription,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

/**
 * Whether the contact `c` is subscribed to the topic: its explicit row, else the
 * topic's default. `topicId` and `defaultSubscription` are SQL expressions (placeholders).
 */
export const subscribedSql = (topicId: string, defaultSubscription: string): string =>
  `coalesce((SELECT s.subscribed FROM mail_topic_subscriptions s WHERE s.topic_id = ${topicId} AND s.contact_id = c.id), ${defaultSubscription} = 'opt_in')`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class SubscriptionTopics {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  async create(organizationId: string, t: { slug: string; name: string; default_subscription: DefaultSubscription; description?: string | null }): Promise<SubscriptionTopicRow | undefined> {
    const { rows } = await this.pg.query<SubscriptionTopicRow>(
      'INSERT INTO mail_topics (organization_id, slug, name, default_subscription, description) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (organization_id, slug) DO NOTHING RETURNING *',
      [organizationId, t.slug, t.name, t.default_subscription, t.description ?? null],
    );
    return rows[0];
  }

  /** By id or slug. */
  async find(organizationId: string, idOrSlug: string): Promise<SubscriptionTopicRow | undefined> {
    const { rows } = await this.pg.query<SubscriptionTopicRow>(`SELECT * FROM mail_topics WHERE organization_id = $1 AND ${UUID.test(idOrSlug) ? 'id = $2::uuid' : 'slug = $2'}`, [organizationId, idOrSlug]);
    return rows[0];
  }

  async update(organizationId: string, id: string, change: { name?: string; default_subscription?: DefaultSubscription; description?: string }): Promise<SubscriptionTopicRow | undefined> {
    const { rows } = await this.pg.query<SubscriptionTopicRow>(
      `UPDATE mail_topics SET name = coalesce($3, name), default_subscription = coalesce($4, default_subscription), description = coalesce($5, description), updated_at = now()
        WHERE organization_id = $1 AND id = $2 RETURNING *`,
      [organizationId, id, change.name ?? null, change.default_subscription ?? null, change.description ?? null],
    );
    return rows[0];
  }

  async delete(organizationId: string, id: string): Promise<SubscriptionTopicRow | undefined> {
    const { rows } = await this.pg.query<SubscriptionTopicRow>('DELETE FROM mail_topics WHERE organization_id = $1 AND id = $2 RETURNING *', [organizationId, id]);
    return rows[0];
  }

  /** The list query of the organization's topics, for a page of them. */
  listQuery(organizationId: string): { select: string; params: unknown[] } {
    return { select: 'SELECT * FROM mail_topics WHERE organization_id = $1', params: [organizationId] };
  }

  /** The list query of every topic of the organization with the contact's effective state (`subscribed`), for a page of them. */
  ofContactQuery(organizationId: string, contactId: string): { select: string; params: unknown[] } {
    return {
      select: `SELECT t.*, coalesce(s.subscribed, t.default_subscription = 'opt_in') AS subscribed FROM mail_topics t
                 LEFT JOIN mail_topic_subscriptions s ON s.topic_id = t.id AND s.contact_id = $2 WHERE t.organization_id = $1`,
      params: [organizationId, contactId],
    };
  }

  /** A page of the organization's topics, newest first. */
  list<T>(organizationId: string, request: { limit?: number; cursor?: string }, map: (row: SubscriptionTopicRow) => T): Promise<Page<T>> {
    return page(this.pg, { select: 'SELECT * FROM mail_topics WHERE organization_id = $1', params: [organizationId], ...request }, map);
  }

  /** Every topic of the organization with the contact's effective state, and whether it chose it. */
  async ofContact(organizationId: string, contactId: string): Promise<{ topic: SubscriptionTopicRow; subscribed: boolean; explicit: boolean }[]> {
    const { rows } = await this.pg.query<SubscriptionTopicRow & { chosen: boolean | null }>(
      `SELECT t.*, s.subscribed AS chosen FROM mail_topics t
         LEFT JOIN mail_topic_subscriptions s ON s.topic_id = t.id AND s.contact_id = $2
        WHERE t.organization_id = $1 ORDER BY t.slug`,
      [organizationId, contactId],
    );
    return rows.map(({ chosen, ...topic }) => ({ topic, subscribed: chosen ?? topic.default_subscription === 'opt_in', explicit: chosen !== null }));
  }

  async choose(topicId: string, contactId: string, subscribed: boolean): Promise<void> {
    await this.pg.query(
      'INSERT INTO mail_topic_subscriptions (topic_id, contact_id, subscribed) VALUES ($1, $2, $3) ON CONFLICT (topic_id, contact_id) DO UPDATE SET subscribed = EXCLUDED.subscribed, updated_at = now()',
      [topicId, contactId, subscribed],
    );
  }

  /**
   * The contact's choices for these topics (ids checked to be the organization's; one choice per
   * topic), all or none: 'topic_gone' or 'contact_gone', nothing written, when a topic or the contact
   * was deleted since it was checked.
   */
  async chooseAll(organizationId: string, contactId: string, choices: readonly { topicId: string; subscribed: boolean }[]): Promise<'ok' | 'topic_gone' | 'contact_gone'> {
    try {
      return await withTransaction(this.pg, async (db) => {
        const { rowCount } = await db.query(
          `INSERT INTO mail_topic_subscriptions (topic_id, contact_id, subscribed)
           SELECT t.id, $2, x.subscribed FROM unnest($3::uuid[], $4::boolean[]) AS x(topic_id, subscribed)
             JOIN mail_topics t ON t.id = x.topic_id AND t.organization_id = $1
           ON CONFLICT (topic_id, contact_id) DO UPDATE SET subscribed = EXCLUDED.subscribed, updated_at = now()`,
          [organizationId, contactId, choices.map((c) => c.topicId), choices.map((c) => c.subscribed)],
        );
        if (rowCount !== choices.length) throw new ChoicesRefused('topic_gone');
        return 'ok' as const;
      });
    } catch (err) {
      if (err instanceof ChoicesRefused) return err.reason;
      const constraint = violatedForeignKey(err);
      if (constraint === 'mail_topic_subscriptions_topic_id_fkey') return 'topic_gone';
      if (constraint === 'mail_topic_subscriptions_contact_id_fkey') return 'contact_gone';
      throw err;
    }
  }

  async forget(topicId: string, contactId: string): Promise<void> {
    await this.pg.query('DELETE FROM mail_topic_subscriptions WHERE topic_id = $1 AND contact_id = $2', [topicId, contactId]);
  }
}
