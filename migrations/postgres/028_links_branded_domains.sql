-- Up Migration
-- Branded domains of a workspace's short links (src/links/domains/). A domain is
-- verified once its TXT record is found (or an operator marks it); only verified
-- domains serve redirects. Deleting one keeps the row (deleted_at), since the
-- deactivated links on it keep their short URL.
CREATE TABLE link_domains (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id        uuid NOT NULL REFERENCES workspaces (id),
  name                text NOT NULL CHECK (name = lower(name)),
  verification_token  text NOT NULL,
  is_default          boolean NOT NULL DEFAULT false,
  verified_at         timestamptz,
  last_checked_at     timestamptz,
  deleted_at          timestamptz,
  created_at          timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  updated_at          timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
);
-- A workspace adds a name once; a name serves one workspace once verified (others may have
-- added it pending: who proves it by DNS first gets it); one default per workspace.
CREATE UNIQUE INDEX link_domains_workspace_name ON link_domains (workspace_id, name) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX link_domains_verified_name ON link_domains (name) WHERE verified_at IS NOT NULL AND deleted_at IS NULL;
CREATE UNIQUE INDEX link_domains_default ON link_domains (workspace_id) WHERE is_default AND deleted_at IS NULL;
CREATE INDEX link_domains_created ON link_domains (workspace_id, created_at DESC, id DESC);

-- A link is on a branded domain (domain_id, its name kept beside it: names never change) or on the
-- service's base domain (both NULL). Short IDs are unique per domain; the base domain is one
-- domain (NULLS NOT DISTINCT), so its short IDs stay unique as before.
ALTER TABLE links ADD COLUMN domain_id uuid REFERENCES link_domains (id), ADD COLUMN domain text;
CREATE UNIQUE INDEX links_domain_short_id ON links (domain_id, short_id) NULLS NOT DISTINCT;
ALTER TABLE links DROP CONSTRAINT links_short_id_key;

-- Down Migration
-- Fails while two links share a short ID on different domains.
ALTER TABLE links ADD CONSTRAINT links_short_id_key UNIQUE (short_id);
DROP INDEX links_domain_short_id;
ALTER TABLE links DROP COLUMN domain, DROP COLUMN domain_id;
DROP TABLE link_domains;
