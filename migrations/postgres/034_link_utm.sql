-- Up Migration
-- UTM parameters a link adds to its destination on the redirect ({source, medium, campaign, term,
-- content}, each optional; src/links/short-links/utm.ts). NULL: none.
ALTER TABLE links ADD COLUMN utm jsonb;

-- Down Migration
ALTER TABLE links DROP COLUMN utm;
