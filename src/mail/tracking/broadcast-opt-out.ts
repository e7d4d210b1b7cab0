// The unsubscribe of a broadcast about no topic (Resend's broadcasts at the root may
// have none): as at Resend, it unsubscribes the contact from all the organization's
// broadcasts, i.e. sets its status to unsubscribed (contacts.ts), which every
// broadcast's audience rule reads (broadcasts/audience.ts) and the sender checks
// again at hand-over (sending/recipient-choices.ts). Transactional mail (/emails) is
// not affected, as a contact's status never applies to it.
import type { Pool } from '../../platform/postgres/pool.ts';
import { contactEventsCte } from '../events/contact-events.ts';

/**
 * Sets the address's contact unsubscribed, in one statement with its contact.updated event (or
 * contact.created: an address that is no contact, e.g. deleted since, is kept as an unsubscribed
 * contact so that its choice holds). A contact already unsubscribed is not written again.
 */
export async function unsubscribeFromBroadcasts(pg: Pool, organizationId: string, email: string): Promise<void> {
  await pg.query(
    `WITH changed AS (
       INSERT INTO mail_contacts (organization_id, email, status) VALUES ($1, $2, 'unsubscribed')
       ON CONFLICT (organization_id, email) DO UPDATE SET status = 'unsubscribed', updated_at = now()
         WHERE mail_contacts.status <> 'unsubscribed'
       RETURNING *, CASE WHEN xmax = 0 THEN 'contact.created' ELSE 'contact.updated' END AS event_type
     ), ${contactEventsCte('changed')}
     SELECT 1`,
    [organizationId, email],
  );
}

/** Whether the address still gets the organization's broadcasts (no contact yet: it would). */
export async function getsBroadcasts(pg: Pool, organizationId: string, email: string): Promise<boolean> {
  const { rows } = await pg.query<{ status: string }>('SELECT status FROM mail_contacts WHERE organization_id = $1 AND email = $2', [organizationId, email]);
  return rows[0] === undefined || rows[0].status === 'subscribed';
}
