-- Up Migration
-- The mail product's tenants (organizations), their API keys (SHA-256 at rest) and sending domains.
CREATE TABLE mail_organizations (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
  plan            text NOT NULL CHECK (plan IN ('free', 'pro')),
  -- NULL: the plan's default; see src/mail/accounts/plans.ts for what 0 and a value mean.
  daily_send_cap  integer CHECK (daily_send_cap >= 0),
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE mail_api_keys (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id  uuid NOT NULL REFERENCES mail_organizations (id),
  name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
  kind             text NOT NULL CHECK (kind IN ('full', 'send', 'test')),
  -- NULL: every domain of the organization; else the (lower-case) domain names the key may use and see.
  domains          text[],
  -- NULL: the platform default (API_RATE_LIMIT_PER_SEC).
  rate_limit       integer CHECK (rate_limit BETWEEN 1 AND 1000),
  display_prefix   text NOT NULL,
  key_hash         bytea NOT NULL UNIQUE,
  created_at       timestamptz NOT NULL DEFAULT now(),
  last_used_at     timestamptz,
  revoked_at       timestamptz
);
CREATE INDEX mail_api_keys_organization ON mail_api_keys (organization_id, created_at DESC);

CREATE TABLE mail_domains (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id   uuid NOT NULL REFERENCES mail_organizations (id),
  name              text NOT NULL,
  tracking_host     text,
  -- The DKIM selector and key pair; the public key (base64 DER) is what the DNS record publishes.
  dkim_selector     text NOT NULL,
  dkim_private_key  text NOT NULL,
  dkim_public_key   text NOT NULL,
  status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'verified', 'failed')),
  verified_at       timestamptz,
  last_checked_at   timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, name)
);
CREATE INDEX mail_domains_list ON mail_domains (organization_id, created_at DESC, id DESC);

-- Down Migration
DROP TABLE mail_domains;
DROP TABLE mail_api_keys;
DROP TABLE mail_organizations;
