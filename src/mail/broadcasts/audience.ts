// Who a broadcast goes to, read in contact-id order a batch at a time (keyset), so
// a fan-out holds one batch in memory whatever the audience's size. A contact
// matches when it is subscribed, its effective state for the topic is subscribed
// (its row, else the topic's default), and it is in the segment if one is set;
// a match on the suppression list comes back flagged, to be counted and left out.
// A resend's audience is also narrowed to its parent's recipients whose message
// has no open and no click yet (spec: Resend rule 7).
import type { PoolClient } from 'pg';
import { compileSegmentFilter, type SegmentFilter } from '../audience/segment-filter.ts';
import { subscribedToTopicSql } from '../audience/topics.ts';

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
  topicId: string;
  topicDefault: string;
  segment: SegmentFilter | null;
  parentId: string | null;
}

/** A contact id lower than any: where a keyset walk of the audience starts. */
export const BEFORE_FIRST_ID = '00000000-0000-0000-0000-000000000000';

/** The next `limit` matching contacts after contact id `after` (null: from the start). */
export async function nextContacts(db: PoolClient, q: AudienceQuery, after: string | null, limit: number): Promise<AudienceContact[]> {
  const params: unknown[] = [q.organizationId, after ?? BEFORE_FIRST_ID, q.topicId, q.topicDefault, limit];
  let where = `c.organization_id = $1 AND c.id > $2 AND c.status = 'subscribed' AND ${subscribedToTopicSql('$3', '$4')}`;
  if (q.segment) {
    const segment = compileSegmentFilter(q.segment, params.length + 1);
    params.push(...segment.params);
    where += ` AND ${segment.sql}`;
  }
  if (q.parentId) {
    params.push(q.parentId);
    where += ` AND EXISTS (SELECT 1 FROM mail_broadcast_recipients r WHERE r.broadcast_id = $${params.length} AND r.contact_id = c.id AND r.message_id IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM mail_events e WHERE e.message_id = r.message_id AND e.type IN ('opened', 'clicked')))`;
  }
  const { rows } = await db.query<AudienceContact>(
    `SELECT c.id, c.email, c.first_name, c.last_name, c.properties,
            EXISTS (SELECT 1 FROM mail_suppressions s WHERE s.organization_id = c.organization_id AND s.email = c.email) AS suppressed
       FROM mail_contacts c WHERE ${where} ORDER BY c.id LIMIT $5`,
    params,
  );
  return rows;
}
