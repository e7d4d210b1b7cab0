-- Up Migration
-- Resend's broadcasts (at the root paths) may have no topic: they go to a segment's contacts that
-- are subscribed and not suppressed. The spec's /api/v1 broadcasts still require one.
ALTER TABLE mail_broadcasts ALTER COLUMN topic DROP NOT NULL;

-- Down Migration
-- Refused while a broadcast has no topic: such a broadcast and its messages are the customer's
-- data (reports, recipients, events), not something a schema step may delete. Remove them, or
-- give them a topic, on purpose first.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM mail_broadcasts WHERE topic IS NULL) THEN
    RAISE EXCEPTION 'mail_broadcasts has broadcasts without a topic (made at the root paths): delete them or set a topic before migrating down past 033';
  END IF;
END $$;
ALTER TABLE mail_broadcasts ALTER COLUMN topic SET NOT NULL;
