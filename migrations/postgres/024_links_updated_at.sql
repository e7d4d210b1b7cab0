-- Up Migration
-- Every ingress asks every few seconds for the links changed since its last look
-- (src/links/redirect/link-revalidator.ts), across workspaces: links_updated leads with
-- workspace_id, so that look needs an index of its own.
CREATE INDEX IF NOT EXISTS links_updated_at ON links (updated_at);

-- Down Migration
DROP INDEX IF EXISTS links_updated_at;
