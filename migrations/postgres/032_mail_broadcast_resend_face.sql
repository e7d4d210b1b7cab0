-- Up Migration
-- Which face made a broadcast: Resend's {{{VARIABLES}}} and declared property fallbacks apply only
-- to broadcasts made at the root paths (true); the spec's /api/v1 broadcasts render as they always did.
ALTER TABLE mail_broadcasts ADD COLUMN resend_face boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE mail_broadcasts DROP COLUMN resend_face;
