-- Up Migration
-- A verified domain whose DKIM record is no longer found is not failed at once (issue 50): as at
-- Resend, it keeps sending as `temporary_failure` while checks go on, for 72 hours from the first
-- failed check (`failing_since`), and only then is `failed`.
ALTER TABLE mail_domains DROP CONSTRAINT mail_domains_status_check;
ALTER TABLE mail_domains ADD CONSTRAINT mail_domains_status_check CHECK (status IN ('pending', 'verified', 'temporary_failure', 'failed'));
ALTER TABLE mail_domains ADD COLUMN failing_since timestamptz;

-- Down Migration
UPDATE mail_domains SET status = 'verified' WHERE status = 'temporary_failure';
ALTER TABLE mail_domains DROP COLUMN failing_since;
ALTER TABLE mail_domains DROP CONSTRAINT mail_domains_status_check;
ALTER TABLE mail_domains ADD CONSTRAINT mail_domains_status_check CHECK (status IN ('pending', 'verified', 'failed'));
