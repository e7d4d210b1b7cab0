// The preferences page behind a message's unsubscribe link (/m/u/<token>): the
// organization's topics with the recipient's effective state (its choice, else
// the topic's default: topics.ts's rule), changed by a plain form POST. The
// signed token is the only authority (it names the message, the recipient and,
// for topic mail, the topic): no cookies, no session, so a forged cross-site
// POST has nothing to ride on, and nobody can make a token for another address.
import type { PoolClient } from 'pg';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { escapeHtml } from '../templates/render.ts';
import { contactOfAddressCte } from '../audience/contacts.ts';

export interface TopicChoice {
  id: string;
  name: string;
  subscribed: boolean;
}

/** Every topic of the organization, with the address's effective state (its contact's choice, else the default). */
export async function topicChoices(db: Pool | PoolClient, organizationId: string, email: string): Promise<TopicChoice[]> {
  const { rows } = await db.query<TopicChoice>(
    `SELECT t.id, t.name, coalesce(s.subscribed, t.default_subscription = 'opt_in') AS subscribed
       FROM mail_topics t
       LEFT JOIN mail_contacts c ON c.organization_id = t.organization_id AND c.email = $2
       LEFT JOIN mail_topic_subscriptions s ON s.topic_id = t.id AND s.contact_id = c.id
      WHERE t.organization_id = $1
      ORDER BY t.name, t.slug`,
    [organizationId, email],
  );
  return rows;
}

/**
 * Sets the address's state for the topics shown on the page (`shown`) to what the form asks
 * (`wanted`: the ones ticked); only topics whose effective state changes are written, so a topic
 * left as it was keeps following its default. The contact is made when the address was none (as
 * the one-click unsubscribe does). Answers the ids of the topics it unsubscribed from.
 */
export async function saveChoices(pg: Pool, organizationId: string, email: string, shown: ReadonlySet<string>, wanted: ReadonlySet<string>): Promise<string[]> {
  return withTransaction(pg, async (db) => {
    const changes = (await topicChoices(db, organizationId, email)).filter((t) => shown.has(t.id) && wanted.has(t.id) !== t.subscribed);
    if (changes.length === 0) return [];
    await db.query(
      `WITH ${contactOfAddressCte('$1', '$2')}
       INSERT INTO mail_topic_subscriptions (topic_id, contact_id, subscribed)
       SELECT x.topic_id, contact.id, x.subscribed FROM contact, unnest($3::uuid[], $4::boolean[]) AS x(topic_id, subscribed)
       ON CONFLICT (topic_id, contact_id) DO UPDATE SET subscribed = EXCLUDED.subscribed, updated_at = now()`,
      [organizationId, email, changes.map((t) => t.id), changes.map((t) => !t.subscribed)],
    );
    return changes.filter((t) => t.subscribed).map((t) => t.id);
  });
}

export interface PageView {
  token: string;
  email: string;
  topics: TopicChoice[];
  /** The topic of the message whose link this is (one-click unsubscribe from it), if any. */
  messageTopic: string | undefined;
  /** For a broadcast about no topic: whether the address still gets the organization's broadcasts. */
  broadcasts?: { subscribed: boolean } | undefined;
  saved: boolean;
}

/**
 * The page: a form of the topics (posted to <token>/preferences) and the one-click button: for
 * topic mail, from its topic; for a broadcast about no topic, from all broadcasts.
 */
export function preferencesHtml(view: PageView): string {
  const token = escapeHtml(view.token);
  const own = view.topics.find((t) => t.id === view.messageTopic);
  const rows = view.topics.map((t) => {
    const id = escapeHtml(t.id);
    return `<input type="hidden" name="shown" value="${id}"><label style="display:block;margin:.4em 0"><input type="checkbox" name="topic" value="${id}"${t.subscribed ? ' checked' : ''}> ${escapeHtml(t.name)}${t.id === view.messageTopic ? ' <small>(this email)</small>' : ''}</label>`;
  }).join('');
  return `<h1 style="font-size:1.4em">Email preferences</h1>
<p>For <strong>${escapeHtml(view.email)}</strong>.</p>
${view.saved ? '<p role="status" id="saved"><strong>Your preferences are saved.</strong></p>' : ''}
${own && own.subscribed ? `<form method="post"><button type="submit" id="unsubscribe">Unsubscribe from ${escapeHtml(own.name)}</button></form>` : ''}
${view.broadcasts?.subscribed ? '<form method="post"><button type="submit" id="unsubscribe">Unsubscribe from all broadcasts</button></form>' : ''}
${view.broadcasts && !view.broadcasts.subscribed ? '<p id="unsubscribed">You are unsubscribed from all broadcasts of this sender.</p>' : ''}
${view.topics.length > 0
    ? `<form method="post" action="./${token}/preferences"><fieldset><legend>The emails you get</legend>${rows}</fieldset><p><button type="submit" id="save">Save preferences</button></p></form>`
    : '<p>There are no topics to choose from.</p>'}`;
}
