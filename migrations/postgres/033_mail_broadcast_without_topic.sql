-- Up Migration
-- Resend's broadcasts (at the root paths) may have no topic: they go to a segment's contacts that
-- are subscribed and not suppressed. The spec's /api/v1 broadcasts still require one.
ALTER TABLE mail_broadcasts ALTER COLUMN topic DROP NOT NULL;

-- Down Migration
DELETE FROM mail_broadcasts WHERE topic IS NULL;
ALTER TABLE mail_broadcasts ALTER COLUMN topic SET NOT NULL;
