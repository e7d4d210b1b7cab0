// Who a message may still go to when it is handed over: what its recipients chose
// counts until the mail leaves, however long it waited (a daily cap, a schedule, a
// retry). Left out, with the reason:
//   - an address on the organization's suppression list (every message);
//   - for a broadcast message (kind `broadcast.<topic>`, or `broadcast` without a topic): a recipient that is no longer
//     an eligible contact: deleted, its status not subscribed, or not subscribed to the
//     topic (its choice, else the topic's default; the broadcasts' own rule,
//     subscribedSql, subscription-topics.ts);
//   - for a message of /emails about a topic: a recipient whose contact is not
//     subscribed to the topic. An address that is no contact made no choice, and a
//     contact's status does not apply to /emails (transactional mail).
import type { Pool } from '../../platform/postgres/pool.ts';
import { subscribedSql } from '../audience/subscription-topics.ts';

export interface MessageAudience {
  organizationId: string;
  /** Lower-cased recipients, without repeats. */
  recipients: string[];
  /** The topic the message is about (id), if any. */
  topicId: string | null;
  topicSlug: string | null;
  broadcast: boolean;
}

/** The recipients to leave out now, each with why. */
export async function leftOut(pg: Pool, m: MessageAudience): Promise<Map<string, string>> {
  const { rows } = await pg.query<{ email: string; suppressed: boolean; contact: boolean; subscribed: boolean | null; in_topic: boolean | null }>(
    `SELECT r.email,
            EXISTS (SELECT 1 FROM mail_suppressions s WHERE s.organization_id = $1 AND s.email = r.email) AS suppressed,
            c.id IS NOT NULL AS contact, c.status = 'subscribed' AS subscribed,
            CASE WHEN c.id IS NOT NULL AND t.id IS NOT NULL THEN ${subscribedSql('t.id', 't.default_subscription')} END AS in_topic
       FROM unnest($2::text[]) AS r(email)
       LEFT JOIN mail_contacts c ON c.organization_id = $1 AND c.email = r.email
       LEFT JOIN mail_topics t ON t.organization_id = $1 AND t.id = $3::uuid`,
    [m.organizationId, m.recipients, m.topicId],
  );
  const out = new Map<string, string>();
  const topic = `topic ${m.topicSlug ?? m.topicId}`;
  for (const r of rows) {
    if (r.suppressed) out.set(r.email, 'on the suppression list');
    else if (m.broadcast && !r.contact) out.set(r.email, 'no longer a contact');
    else if (m.broadcast && !r.subscribed) out.set(r.email, 'the contact unsubscribed');
    else if (m.topicId && r.in_topic === false) out.set(r.email, `unsubscribed from ${topic}`);
  }
  return out;
}

/** How an attempt lists the recipients left out. */
export const describeLeftOut = (out: ReadonlyMap<string, string>): string => [...out].map(([email, why]) => `${email}: ${why}`).join('; ');
