-- Up Migration
-- Issue 54, item 2. A link's analytics shared through a public page, /analytics/<id>:
-- the id is the capability (sh_ + 24 random base62 characters, 142 bits), optionally with
-- a password (scrypt, as a link's: src/links/short-links/link-password.ts) and an expiry.
-- A revoked share is kept (revoked_at) so its listing tells what happened to it.
CREATE TABLE link_analytics_shares (
  id             text PRIMARY KEY CHECK (id ~ '^sh_[0-9A-Za-z]{24}$'),
  workspace_id   uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  link_id        uuid NOT NULL REFERENCES links (id) ON DELETE CASCADE,
  password_hash  text,
  expires_at     timestamptz,
  revoked_at     timestamptz,
  created_at     timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
);
CREATE INDEX link_analytics_shares_link ON link_analytics_shares (workspace_id, link_id, created_at DESC);

-- Who may see an analytics page without presenting a credential on every request: a share's
-- password given once, or a workspace key given once (the sign-in form or a page token).
-- Only the SHA-256 of the session's secret is stored. A session ends at expires_at, and with
-- its share (revoked, expired) or its key (revoked), which every request checks.
CREATE TABLE link_analytics_sessions (
  token_hash     bytea PRIMARY KEY,
  workspace_id   uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  share_id       text REFERENCES link_analytics_shares (id) ON DELETE CASCADE,
  key_id         uuid REFERENCES api_keys (id) ON DELETE CASCADE,
  expires_at     timestamptz NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  CHECK ((share_id IS NULL) <> (key_id IS NULL))
);
CREATE INDEX link_analytics_sessions_expiry ON link_analytics_sessions (expires_at);

-- Down Migration
DROP TABLE link_analytics_sessions;
DROP TABLE link_analytics_shares;
