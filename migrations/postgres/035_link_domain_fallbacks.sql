-- Up Migration
-- Where a branded domain sends visitors that name no link (issue 43, item 3): its root
-- (GET /) to root_url, an unknown short ID to not_found_url; NULL keeps the 404. Both are
-- served from the ingresses' memory (served-domains.ts), read with the verified domains.
ALTER TABLE link_domains ADD COLUMN root_url text, ADD COLUMN not_found_url text;

-- Down Migration
ALTER TABLE link_domains DROP COLUMN not_found_url, DROP COLUMN root_url;
