-- Up Migration
-- The rest of the webhook events (Resend's names in src/mail/webhooks/mail-webhook-events.ts) as
-- mail events, recorded with the change they tell of and published to mail.events like the others:
--   scheduled         a message accepted with a future scheduled_at
--   delivery_delayed  a hand-over failed for now and will be retried
--   failed            the last attempt failed, or the sender gave the message up
--   suppressed        not sent: every recipient suppressed or left out
--   contact.created, contact.updated, contact.deleted   (contact_id, a snapshot in data)
--   broadcast.sent    a broadcast finished (broadcast_id, a snapshot in data)
-- (email.sent is the relay's acceptance, the `delivered` event: no type of its own.)
-- Contact and broadcast events are about no message, so message_id may be empty when one of
-- contact_id, broadcast_id is set.
ALTER TABLE mail_events ALTER COLUMN message_id DROP NOT NULL;
ALTER TABLE mail_events ADD COLUMN contact_id uuid, ADD COLUMN broadcast_id uuid, ADD COLUMN data jsonb;
ALTER TABLE mail_events DROP CONSTRAINT mail_events_type_check;
ALTER TABLE mail_events ADD CONSTRAINT mail_events_type_check CHECK (type IN (
  'delivered', 'bounced', 'complained', 'opened', 'clicked', 'unsubscribed',
  'scheduled', 'delivery_delayed', 'failed', 'suppressed',
  'contact.created', 'contact.updated', 'contact.deleted', 'broadcast.sent'));
ALTER TABLE mail_events ADD CONSTRAINT mail_events_subject_check CHECK (message_id IS NOT NULL OR contact_id IS NOT NULL OR broadcast_id IS NOT NULL);

-- The broadcast report counts the types it counted before, and only those: a failed or suppressed
-- message is already `dropped` (by mail_deliveries), and the new types would otherwise become flags
-- of their own. The WHEN also spares an import's contact events a function call per row.
DROP TRIGGER mail_events_count ON mail_events;
CREATE TRIGGER mail_events_count AFTER INSERT ON mail_events
  FOR EACH ROW WHEN (NEW.type IN ('delivered', 'bounced', 'complained', 'opened', 'clicked', 'unsubscribed'))
  EXECUTE FUNCTION mail_events_count();

-- Down Migration
DROP TRIGGER mail_events_count ON mail_events;
CREATE TRIGGER mail_events_count AFTER INSERT ON mail_events FOR EACH ROW EXECUTE FUNCTION mail_events_count();
DELETE FROM mail_event_outbox o USING mail_events e
 WHERE e.id = o.event_id AND e.type NOT IN ('delivered', 'bounced', 'complained', 'opened', 'clicked', 'unsubscribed');
DELETE FROM mail_events WHERE type NOT IN ('delivered', 'bounced', 'complained', 'opened', 'clicked', 'unsubscribed');
ALTER TABLE mail_events DROP CONSTRAINT mail_events_subject_check;
ALTER TABLE mail_events DROP CONSTRAINT mail_events_type_check;
ALTER TABLE mail_events ADD CONSTRAINT mail_events_type_check CHECK (type IN ('delivered', 'bounced', 'complained', 'opened', 'clicked', 'unsubscribed'));
ALTER TABLE mail_events DROP COLUMN data, DROP COLUMN broadcast_id, DROP COLUMN contact_id;
ALTER TABLE mail_events ALTER COLUMN message_id SET NOT NULL;
