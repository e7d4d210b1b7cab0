-- Up Migration
-- Resend's templates carry a From, a Reply-To and declared variables (key, type, fallback value)
-- with their content: kept per version, as the content is, so a published version never changes.
ALTER TABLE mail_template_versions ADD COLUMN from_address text;
ALTER TABLE mail_template_versions ADD COLUMN reply_to text[];
ALTER TABLE mail_template_versions ADD COLUMN variables jsonb;

-- Down Migration
ALTER TABLE mail_template_versions DROP COLUMN variables;
ALTER TABLE mail_template_versions DROP COLUMN reply_to;
ALTER TABLE mail_template_versions DROP COLUMN from_address;
