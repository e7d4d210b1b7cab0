// Who a broadcast goes to, read in contact-id order a batch at a time (keyset), so
// a fan-out holds one batch in memory whatever the audience's size. A contact
// matches when it is subscribed, its effective state for the topic is subscribed
// (its row, else the topic's default), and it is in the segment if one is set (a
// member of it, or matched by its filter: audience/segments.ts);
// a match on the suppression list comes back flagged, to be counted and left out.
// A resend's audience is also narrowed to its parent's recipients whose message
// has no open and no click yet (spec: Resend rule 7). The rest of an A/B test
// re-checks its waiting recipients by the same rule (eligibleSql), when it sends.
import type { PoolClient } from 'pg';
import { compileSegmentFilter, type SegmentFilter } from '../audience/segment-filter.ts';
import { memberSql } from '../audience/segments.ts';
import { subscribedSql } from '../audience/subscription-topics.ts';

export interface AudienceContact {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  properties: Record<string, string | number | boolean | null>;
  suppressed: boolean;
}

export interface AudienceQuery {
  organizationId: string;
  /** The topic and its default; null for a broadcast without one (Resend's), where the topic rule does not apply. */
  topic: { id: string; defaultSubscription: string } | null;
  /** The segment's id and its checked filter, or null for the whole topic. */
  segment: { id: string; filter: SegmentFilter } | null;
  parentId: string | null;
  /** Fill declared property fallbacks (Resend's contact-properties): only for broadcasts made at the root. */
  declaredFallbacks: boolean;
}

/** A contact id lower than any: where a keyset walk of the audience starts. */
export const BEFORE_FIRST_ID = '00000000-0000-0000-0000-000000000000';

/**
 * Contact `c`'s properties with the fallback value of each property its organization declares
 * (Resend's contact-properties) that the contact does not hold, so {{{KEY}}} and {{contact.KEY}}
 * render it.
 */
const DECLARED_PROPERTIES = `coalesce((SELECT jsonb_object_agg(p.key, p.fallback_value) FROM mail_contact_properties p
   WHERE p.organization_id = c.organization_id AND p.fallback_value IS NOT NULL AND p.fallback_value <> 'null'::jsonb), '{}'::jsonb) || c.properties AS properties`;

/** The properties column: an /api/v1 broadcast sees the contact's own, so its tags' own fallbacks apply as before. */
const propertiesOf = (q: AudienceQuery): string => (q.declaredFallbacks ? DECLARED_PROPERTIES : 'c.properties');

/** Whether contact `c` is suppressed (counted and left out, not an eligibility rule of the SQL). */
const SUPPRESSED = 'EXISTS (SELECT 1 FROM mail_suppressions s WHERE s.organization_id = c.organization_id AND s.email = c.email)';

/**
 * The one eligibility rule, as SQL over contact `c` (suppression apart): subscribed, subscribed to
 * the topic, in the segment, and for a resend a non-opener of the parent. Its values are appended
 * to `params`.
 */
function eligibleSql(q: AudienceQuery, params: unknown[]): string {
  const $ = (value: unknown) => `$${params.push(value)}`;
  let sql = `c.organization_id = ${$(q.organizationId)} AND c.status = 'subscribed'`;
  if (q.topic) sql += ` AND ${subscribedSql($(q.topic.id), $(q.topic.defaultSubscription))}`;
  if (q.segment) {
    const member = memberSql($(q.segment.id));
    const segment = compileSegmentFilter(q.segment.filter, params.length + 1);
    params.push(...segment.params);
    sql += ` AND (${member} OR ${segment.sql})`;
  }
  if (q.parentId) {
    sql += ` AND EXISTS (SELECT 1 FROM mail_broadcast_recipients r WHERE r.broadcast_id = ${$(q.parentId)} AND r.contact_id = c.id AND r.message_id IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM mail_events e WHERE e.message_id = r.message_id AND e.type IN ('opened', 'clicked') AND NOT e.automated))`;
  }
  return sql;
}

/** The next `limit` matching contacts after contact id `after` (null: from the start). */
export async function nextContacts(db: PoolClient, q: AudienceQuery, after: string | null, limit: number): Promise<AudienceContact[]> {
  const params: unknown[] = [];
  const eligible = eligibleSql(q, params);
  const { rows } = await db.query<AudienceContact>(
    `SELECT c.id, c.email, c.first_name, c.last_name, ${propertiesOf(q)}, ${SUPPRESSED} AS suppressed
       FROM mail_contacts c WHERE ${eligible} AND c.id > $${params.push(after ?? BEFORE_FIRST_ID)} ORDER BY c.id LIMIT $${params.push(limit)}`,
    params,
  );
  return rows;
}

/** A recipient waiting for its broadcast's A/B winner, with its contact as it is now. */
export interface WaitingRecipient {
  contactId: string;
  /** Null when the contact was deleted meanwhile. */
  contact: AudienceContact | null;
  /** Whether the contact is still eligible (the same rule as the audience's). */
  eligible: boolean;
}

/** The broadcast's next `limit` recipients waiting for the A/B winner after contact id `after`, in contact-id order. */
export async function nextWaiting(db: PoolClient, q: AudienceQuery, broadcastId: string, after: string | null, limit: number): Promise<WaitingRecipient[]> {
  const params: unknown[] = [];
  const eligible = eligibleSql(q, params);
  const { rows } = await db.query<AudienceContact & { contact_id: string; eligible: boolean }>(
    `SELECT r.contact_id, c.id, c.email, c.first_name, c.last_name, ${propertiesOf(q)},
            c.id IS NOT NULL AND coalesce(${eligible}, false) AS eligible, c.id IS NOT NULL AND ${SUPPRESSED} AS suppressed
       FROM mail_broadcast_recipients r LEFT JOIN mail_contacts c ON c.id = r.contact_id
      WHERE r.broadcast_id = $${params.push(broadcastId)} AND r.state = 'waiting' AND r.contact_id > $${params.push(after ?? BEFORE_FIRST_ID)}
      ORDER BY r.contact_id LIMIT $${params.push(limit)}`,
    params,
  );
  return rows.map(({ contact_id, eligible: isEligible, ...c }) => ({ contactId: contact_id, contact: c.id ? c : null, eligible: isEligible }));
}
