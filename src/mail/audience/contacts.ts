// Contacts of an organization: one per (lower-cased) address. Each change records
// its contact.* event in the same statement (events/contact-events.ts).
import type { PoolClient } from 'pg';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { violatedForeignKey } from '../../platform/postgres/refused-value.ts';
import { contactEventsCte } from '../events/contact-events.ts';
import type { ContactStatus, PropertyValue } from './contact-fields.ts';

export interface Contact {
  object: 'contact';
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  properties: Record<string, PropertyValue>;
  status: ContactStatus;
  created_at: string;
  updated_at: string;
}

export interface ContactRow {
  id: string;
  organization_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  properties: Record<string, PropertyValue>;
  status: ContactStatus;
  created_at: Date;
  updated_at: Date;
}

export const toContact = (r: ContactRow): Contact => ({
  object: 'contact',
  id: r.id,
  email: r.email,
  first_name: r.first_name,
  last_name: r.last_name,
  properties: r.properties,
  status: r.status,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

export interface NewContact {
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  properties?: Record<string, PropertyValue>;
  status?: ContactStatus;
}

/**
 * CTEs (to open a WITH) naming in `contact (id, made)` the contact of an address, made (subscribed,
 * no properties) and its contact.created recorded when the organization had none. The one way a
 * contact is made for an address that writes to it (an unsubscribe, a preferences page, an event).
 * The row is locked either way (a conflict updates it to itself), so concurrent makers agree.
 */
export const contactOfAddressCte = (organizationParam: string, emailParam: string): string => `
contact_row AS (
  INSERT INTO mail_contacts (organization_id, email) VALUES (${organizationParam}, ${emailParam})
  ON CONFLICT (organization_id, email) DO UPDATE SET email = EXCLUDED.email
  RETURNING *, 'contact.created' AS event_type, (xmax = 0) AS made
), ${contactEventsCte('(SELECT * FROM contact_row WHERE made)')},
contact AS (SELECT id, made FROM contact_row)`;

/** The segments a new contact joins and its choices for topics (ids of the organization's). */
export interface ContactJoins {
  segments: string[];
  topics: { topicId: string; subscribed: boolean }[];
}

export type ContactChange = Partial<Omit<NewContact, 'email'>> & { email?: string };

export class Contacts {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  /**
   * Creates the contact, and in the same statement its memberships of `joins.segments` and its
   * choices for `joins.topics` (Resend's contacts.create; ids already checked to be the
   * organization's): all or nothing. Undefined when the organization already has the address;
   * 'segment_gone' or 'topic_gone', nothing written, when one of them was deleted since it was checked.
   */
  async create(organizationId: string, c: NewContact, joins: ContactJoins = { segments: [], topics: [] }): Promise<ContactRow | undefined | 'segment_gone' | 'topic_gone'> {
    try {
      return await this.insert(organizationId, c, joins);
    } catch (err) {
      const constraint = violatedForeignKey(err);
      if (constraint?.startsWith('mail_segment_members_segment')) return 'segment_gone';
      if (constraint?.startsWith('mail_topic_subscriptions_topic')) return 'topic_gone';
      throw err;
    }
  }

  private async insert(organizationId: string, c: NewContact, joins: ContactJoins): Promise<ContactRow | undefined> {
    const { rows } = await this.pg.query<ContactRow>(
      `WITH changed AS (
         INSERT INTO mail_contacts (organization_id, email, first_name, last_name, properties, status)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (organization_id, email) DO NOTHING RETURNING *, 'contact.created' AS event_type
       ), ${contactEventsCte('changed')},
       joined AS (INSERT INTO mail_segment_members (segment_id, contact_id) SELECT s, changed.id FROM changed, unnest($7::uuid[]) AS s),
       chosen AS (INSERT INTO mail_topic_subscriptions (topic_id, contact_id, subscribed) SELECT t, changed.id, b FROM changed, unnest($8::uuid[], $9::boolean[]) AS u(t, b))
       SELECT * FROM changed`,
      [organizationId, c.email, c.first_name ?? null, c.last_name ?? null, JSON.stringify(c.properties ?? {}), c.status ?? 'subscribed',
        joins.segments, joins.topics.map((t) => t.topicId), joins.topics.map((t) => t.subscribed)],
    );
    return rows[0];
  }

  /** By id or by address. */
  async find(organizationId: string, idOrEmail: string): Promise<ContactRow | undefined> {
    const byEmail = idOrEmail.includes('@');
    const { rows } = await this.pg.query<ContactRow>(`SELECT * FROM mail_contacts WHERE organization_id = $1 AND ${byEmail ? 'email = lower($2)' : 'id = $2::uuid'}`, [organizationId, idOrEmail]);
    return rows[0];
  }

  /**
   * Changes the given fields; `properties` replaces the contact's properties. Undefined when there is
   * no such contact; 'contact_exists', changing nothing, when the new address is another contact's.
   * With `mergeProperties`, the properties written are what it makes of the contact's current ones,
   * read under the row's lock in the same transaction, so concurrent merges each keep the other's
   * keys (a read outside the lock lost them); it may throw to refuse the result.
   */
  async update(organizationId: string, id: string, change: ContactChange, mergeProperties?: (current: Record<string, PropertyValue>) => Record<string, PropertyValue>): Promise<ContactRow | undefined | 'contact_exists'> {
    try {
      if (!mergeProperties) return await this.write(this.pg, organizationId, id, change);
      return await withTransaction(this.pg, async (client) => {
        const { rows: [locked] } = await client.query<{ properties: Record<string, PropertyValue> }>('SELECT properties FROM mail_contacts WHERE organization_id = $1 AND id = $2 FOR UPDATE', [organizationId, id]);
        if (!locked) return undefined;
        return this.write(client, organizationId, id, { ...change, properties: mergeProperties(locked.properties) });
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') return 'contact_exists';
      throw err;
    }
  }

  private async write(db: Pool | PoolClient, organizationId: string, id: string, change: ContactChange): Promise<ContactRow | undefined> {
    const { rows } = await db.query<ContactRow>(
      `WITH changed AS (
         UPDATE mail_contacts SET
           email = coalesce($3, email),
           first_name = CASE WHEN $4 THEN $5 ELSE first_name END,
           last_name = CASE WHEN $6 THEN $7 ELSE last_name END,
           properties = coalesce($8::jsonb, properties),
           status = coalesce($9, status),
           updated_at = now()
         WHERE organization_id = $1 AND id = $2 RETURNING *, 'contact.updated' AS event_type
       ), ${contactEventsCte('changed')}
       SELECT * FROM changed`,
      [organizationId, id, change.email ?? null, change.first_name !== undefined, change.first_name ?? null, change.last_name !== undefined, change.last_name ?? null,
        change.properties ? JSON.stringify(change.properties) : null, change.status ?? null],
    );
    return rows[0];
  }

  async delete(organizationId: string, id: string): Promise<ContactRow | undefined> {
    const { rows } = await this.pg.query<ContactRow>(
      `WITH changed AS (DELETE FROM mail_contacts WHERE organization_id = $1 AND id = $2 RETURNING *, 'contact.deleted' AS event_type),
       ${contactEventsCte('changed')}
       SELECT * FROM changed`,
      [organizationId, id],
    );
    return rows[0];
  }

  listQuery(organizationId: string, filters: { email?: string; status?: ContactStatus }): { select: string; params: unknown[] } {
    return {
      select: 'SELECT * FROM mail_contacts WHERE organization_id = $1 AND ($2::text IS NULL OR email = lower($2)) AND ($3::text IS NULL OR status = $3)',
      params: [organizationId, filters.email ?? null, filters.status ?? null],
    };
  }
}
