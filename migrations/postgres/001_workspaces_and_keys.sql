-- Up Migration
-- Workspaces of the link service and their API keys (stored only as SHA-256 hashes).
CREATE TABLE workspaces (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
  plan        text NOT NULL CHECK (plan IN ('free', 'pro', 'enterprise')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id  uuid NOT NULL REFERENCES workspaces (id),
  name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
  -- The first characters of the key, shown in listings so people can tell keys apart.
  display_prefix text NOT NULL,
  key_hash      bytea NOT NULL UNIQUE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at DESC);

-- Down Migration
DROP TABLE api_keys;
DROP TABLE workspaces;
