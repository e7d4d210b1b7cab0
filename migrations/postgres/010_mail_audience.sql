-- Up Migration
-- The mail audience: contacts, topics with per-contact subscriptions, and segments.
CREATE TABLE mail_contacts (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id  uuid NOT NULL REFERENCES mail_organizations (id),
  email            text NOT NULL,  -- lower-cased
  first_name       text,
  last_name        text,
  properties       jsonb NOT NULL DEFAULT '{}'::jsonb,
  status           text NOT NULL DEFAULT 'subscribed' CHECK (status IN ('subscribed', 'unsubscribed')),
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, email)
);
CREATE INDEX mail_contacts_list ON mail_contacts (organization_id, created_at DESC, id DESC);
-- Broadcasts stream an audience by id (keyset).
CREATE INDEX mail_contacts_by_id ON mail_contacts (organization_id, id);

CREATE TABLE mail_topics (
  id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id       uuid NOT NULL REFERENCES mail_organizations (id),
  slug                  text NOT NULL,
  name                  text NOT NULL,
  default_subscription  text NOT NULL CHECK (default_subscription IN ('opt_in', 'opt_out')),
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, slug)
);
CREATE INDEX mail_topics_list ON mail_topics (organization_id, created_at DESC, id DESC);

-- A contact's explicit choice for a topic; without a row the topic's default applies.
CREATE TABLE mail_topic_subscriptions (
  topic_id    uuid NOT NULL REFERENCES mail_topics (id) ON DELETE CASCADE,
  contact_id  uuid NOT NULL REFERENCES mail_contacts (id) ON DELETE CASCADE,
  subscribed  boolean NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (topic_id, contact_id)
);
CREATE INDEX mail_topic_subscriptions_contact ON mail_topic_subscriptions (contact_id);

CREATE TABLE mail_segments (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id  uuid NOT NULL REFERENCES mail_organizations (id),
  name             text NOT NULL,
  filter           jsonb NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_segments_list ON mail_segments (organization_id, created_at DESC, id DESC);

-- Down Migration
DROP TABLE mail_segments;
DROP TABLE mail_topic_subscriptions;
DROP TABLE mail_topics;
DROP TABLE mail_contacts;
