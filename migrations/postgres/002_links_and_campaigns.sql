-- Up Migration
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- Campaigns are link folders.
CREATE TABLE campaigns (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id  uuid NOT NULL REFERENCES workspaces (id),
  name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
  description   text,
  created_at    timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  updated_at    timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
);
CREATE UNIQUE INDEX campaigns_name ON campaigns (workspace_id, lower(name));
CREATE INDEX campaigns_created ON campaigns (workspace_id, created_at DESC, id DESC);

-- Link times are kept at millisecond precision, the precision of the JSON API and
-- of the keyset cursors built from them.
CREATE TABLE links (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id  uuid NOT NULL REFERENCES workspaces (id),
  short_id      text NOT NULL UNIQUE,
  destination   text NOT NULL,
  ios_url       text,
  android_url   text,
  tags          text[] NOT NULL DEFAULT '{}',
  pixels        jsonb NOT NULL DEFAULT '[]',
  expires_at    timestamptz,
  scan_limit    integer CHECK (scan_limit > 0),
  -- Set by the scan-limit actor when the link has used up its scans.
  exhausted_at  timestamptz,
  is_active     boolean NOT NULL DEFAULT true,
  campaign_id   uuid REFERENCES campaigns (id),
  -- Bumped on every change; changelog consumers keep the highest version they saw.
  version       bigint NOT NULL DEFAULT 1,
  created_at    timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  updated_at    timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
);
CREATE INDEX links_created ON links (workspace_id, created_at DESC, id DESC);
CREATE INDEX links_updated ON links (workspace_id, updated_at DESC, id DESC);
CREATE INDEX links_short ON links (workspace_id, short_id COLLATE "C", id);
CREATE INDEX links_campaign ON links (campaign_id);
CREATE INDEX links_tags ON links USING gin (tags);
CREATE INDEX links_search ON links USING gin ((short_id || ' ' || destination) gin_trgm_ops);

-- Transactional outbox: a link change is recorded here in the same transaction,
-- then published to links.changelog; a relay republishes what a crash left behind.
CREATE TABLE link_changelog_outbox (
  id          bigserial PRIMARY KEY,
  link_id     uuid NOT NULL REFERENCES links (id),
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX link_changelog_outbox_link ON link_changelog_outbox (link_id);

-- Down Migration
DROP TABLE link_changelog_outbox;
DROP TABLE links;
DROP TABLE campaigns;
