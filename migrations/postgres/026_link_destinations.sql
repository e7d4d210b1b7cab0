-- Up Migration
-- Where a link sends a visitor besides its destination (issue 33, items 6, 8, 2 and 3):
-- * forward_query: the short URL's query string is appended to the destination (on by
--   default, as in Shlink); click_id: svc_cid is appended (off for pre-signed URLs).
-- * expired_url: where an expired, exhausted or deactivated link (or one before valid_from)
--   sends visitors instead of the refusal page; valid_from: before it the link does not redirect.
-- * geo: {"<ISO country>": url}; test_variants: [{url, percent}] (an A/B test).
ALTER TABLE links
  ADD COLUMN IF NOT EXISTS forward_query boolean NOT NULL DEFAULT true,
  ADD COLUMN IF NOT EXISTS click_id boolean NOT NULL DEFAULT true,
  ADD COLUMN IF NOT EXISTS expired_url text,
  ADD COLUMN IF NOT EXISTS valid_from timestamptz,
  ADD COLUMN IF NOT EXISTS geo jsonb,
  ADD COLUMN IF NOT EXISTS test_variants jsonb;

-- A link starts before it ends; a change that breaks it is refused (valid_from_after_expiry).
ALTER TABLE links DROP CONSTRAINT IF EXISTS links_valid_from_before_expiry;
ALTER TABLE links ADD CONSTRAINT links_valid_from_before_expiry CHECK (valid_from IS NULL OR expires_at IS NULL OR valid_from < expires_at);

-- Down Migration
ALTER TABLE links DROP CONSTRAINT IF EXISTS links_valid_from_before_expiry;
ALTER TABLE links
  DROP COLUMN IF EXISTS forward_query,
  DROP COLUMN IF EXISTS click_id,
  DROP COLUMN IF EXISTS expired_url,
  DROP COLUMN IF EXISTS valid_from,
  DROP COLUMN IF EXISTS geo,
  DROP COLUMN IF EXISTS test_variants;
