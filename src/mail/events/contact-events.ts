// contact.created / contact.updated / contact.deleted as mail events, written by
// the statement that changes the contacts (a CTE), so the change and its events
// commit together, for one contact or an import's batch of a thousand alike (one
// multi-row insert). An import publishes each batch's events itself; the API's single
// changes leave theirs to the outbox relay (a few seconds).

/** The contact as the API shows it (contacts.ts toContact), plus Resend's `unsubscribed`, from a mail_contacts row `c`. */
const SNAPSHOT = `jsonb_build_object(
  'object', 'contact', 'id', c.id, 'email', c.email, 'first_name', c.first_name, 'last_name', c.last_name,
  'properties', c.properties, 'status', c.status, 'unsubscribed', c.status = 'unsubscribed',
  'created_at', to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'updated_at', to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;

/**
 * CTEs (to follow others in a WITH) recording one event per row of `source`: rows of
 * mail_contacts, with the event's type in a column `event_type`.
 */
export const contactEventsCte = (source: string): string => `
contact_events AS (
  INSERT INTO mail_events (organization_id, contact_id, type, data)
  SELECT c.organization_id, c.id, c.event_type, ${SNAPSHOT} FROM ${source} c
  RETURNING id, occurred_at
), contact_event_outbox AS (
  INSERT INTO mail_event_outbox (event_id, created_at) SELECT id, occurred_at FROM contact_events
)`;
