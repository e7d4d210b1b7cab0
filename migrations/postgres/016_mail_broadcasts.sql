-- Up Migration
-- Broadcasts: one message per eligible contact of a topic (spec: email-broadcast-api.md).
CREATE TABLE mail_broadcasts (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id   uuid NOT NULL REFERENCES mail_organizations (id),
  name              text NOT NULL,
  status            text NOT NULL CHECK (status IN ('draft', 'scheduled', 'sending', 'testing', 'sent', 'canceled')),
  from_address      text NOT NULL,
  from_domain       text NOT NULL,
  topic             text NOT NULL,   -- the topic's slug
  segment_id        uuid,
  template_id       uuid,
  template_slug     text,
  template_version  integer,
  subject           text NOT NULL,
  html              text,
  text_body         text,
  subject_b         text,
  ab_test           jsonb,
  ab_winner         text CHECK (ab_winner IN ('A', 'B')),
  ab_decided_at     timestamptz,
  parent_id         uuid REFERENCES mail_broadcasts (id),
  reply_to          text,
  preview_text      text,
  scheduled_at      timestamptz,
  started_at        timestamptz,
  finished_at       timestamptz,
  -- What the fan-out has done, written with each batch (stats is built from these).
  fanned_out        boolean NOT NULL DEFAULT false,  -- stats exist once the worker started it
  eligible          integer NOT NULL DEFAULT 0,
  suppressed        integer NOT NULL DEFAULT 0,
  queued            integer NOT NULL DEFAULT 0,  -- recipient rows queued or waiting for the A/B winner
  skipped           integer NOT NULL DEFAULT 0,
  test_share        integer,
  reason            text,
  -- Where the fan-out stands: the phase and the last contact id it took (keyset).
  phase             text NOT NULL DEFAULT 'audience' CHECK (phase IN ('audience', 'rest')),
  cursor            uuid,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_broadcasts_list ON mail_broadcasts (organization_id, created_at DESC, id DESC);
-- Resend rule 4: one child that is not canceled per parent.
CREATE UNIQUE INDEX mail_broadcasts_live_child ON mail_broadcasts (parent_id) WHERE parent_id IS NOT NULL AND status <> 'canceled';

-- One row per contact the broadcast reached (unique: a fan-out repeated after a crash adds nothing).
CREATE TABLE mail_broadcast_recipients (
  broadcast_id  uuid NOT NULL REFERENCES mail_broadcasts (id) ON DELETE CASCADE,
  contact_id    uuid NOT NULL,
  -- queued: its message is queued; waiting: for the A/B winner; skipped: could not be made.
  state         text NOT NULL CHECK (state IN ('queued', 'waiting', 'skipped')),
  variant       text CHECK (variant IN ('A', 'B')),
  message_id    uuid,
  reason        text,
  PRIMARY KEY (broadcast_id, contact_id)
);
CREATE INDEX mail_broadcast_recipients_message ON mail_broadcast_recipients (message_id) WHERE message_id IS NOT NULL;

-- Durable timers: a broadcast's start (now or at scheduled_at) and its A/B decision. A worker
-- publishes a due job to mail.commands and deletes it in one transaction.
CREATE TABLE mail_broadcast_jobs (
  broadcast_id  uuid NOT NULL REFERENCES mail_broadcasts (id) ON DELETE CASCADE,
  command       text NOT NULL CHECK (command IN ('start', 'decide')),
  run_at        timestamptz NOT NULL,
  PRIMARY KEY (broadcast_id, command)
);
CREATE INDEX mail_broadcast_jobs_due ON mail_broadcast_jobs (run_at);

-- Down Migration
DROP TABLE mail_broadcast_jobs;
DROP TABLE mail_broadcast_recipients;
DROP TABLE mail_broadcasts;
