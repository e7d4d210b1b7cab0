-- Up Migration
-- Automations: a trigger event name and steps that each send a published template
-- version, optionally after a delay. POST /events starts a run of each enabled
-- automation its event triggers (issue 17).
CREATE TABLE mail_automations (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES mail_organizations (id),
  name            text NOT NULL,
  trigger_event   text NOT NULL,
  from_address    text NOT NULL,
  from_domain     text NOT NULL,
  reply_to        text,
  -- [{template_id, template_slug, version, delay_minutes}], versions pinned when the automation is written.
  steps           jsonb NOT NULL,
  enabled         boolean NOT NULL DEFAULT true,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_automations_trigger ON mail_automations (organization_id, trigger_event) WHERE enabled;
CREATE INDEX mail_automations_list ON mail_automations (organization_id, created_at DESC, id DESC);

-- Events posted to POST /events, published to mail.inbound-events through their outbox.
CREATE TABLE mail_inbound_events (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL,
  name            text NOT NULL,
  contact_id      uuid,                -- null: an unknown address that started nothing
  email           text,
  properties      jsonb NOT NULL DEFAULT '{}',
  contact_created boolean NOT NULL,
  runs_started    integer NOT NULL,
  received_at     timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE mail_inbound_event_outbox (
  event_id   uuid PRIMARY KEY,
  created_at timestamptz NOT NULL
);
CREATE INDEX mail_inbound_event_outbox_age ON mail_inbound_event_outbox (created_at);

-- A run of an automation for one contact. `step` is the next step to take; a run whose
-- next_at has come is published to mail.automation-steps (keyed by run id) by the
-- automation worker's timer, which clears next_at in the same transaction.
CREATE TABLE mail_automation_runs (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL,
  automation_id   uuid NOT NULL REFERENCES mail_automations (id) ON DELETE CASCADE,
  contact_id      uuid NOT NULL,
  event_id        uuid NOT NULL,
  state           text NOT NULL CHECK (state IN ('running', 'waiting', 'completed', 'canceled')),
  steps           jsonb NOT NULL,      -- the automation's steps when the run started: a change applies to later runs
  step            integer NOT NULL DEFAULT 0,
  next_at         timestamptz,
  reason          text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  finished_at     timestamptz
);
CREATE INDEX mail_automation_runs_due ON mail_automation_runs (next_at) WHERE next_at IS NOT NULL;
CREATE INDEX mail_automation_runs_list ON mail_automation_runs (automation_id, created_at DESC, id DESC);

-- Each change of a run (started, a step's message queued, waiting, completed, canceled), for
-- mail.automation-runs through its outbox.
CREATE TABLE mail_automation_run_changes (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  run_id          uuid NOT NULL,
  organization_id uuid NOT NULL,
  automation_id   uuid NOT NULL,
  contact_id      uuid NOT NULL,
  state           text NOT NULL,
  step            integer NOT NULL,
  message_id      uuid,
  occurred_at     timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE mail_automation_run_change_outbox (
  change_id  uuid PRIMARY KEY,
  created_at timestamptz NOT NULL
);
CREATE INDEX mail_automation_run_change_outbox_age ON mail_automation_run_change_outbox (created_at);

-- Daily quotas of events per organization and UTC day (spec, Limits): new contacts
-- created by events and automation runs they started. Taken under the row's lock.
CREATE TABLE mail_event_quotas (
  organization_id uuid NOT NULL,
  day             date NOT NULL,
  contacts        integer NOT NULL DEFAULT 0,
  runs            integer NOT NULL DEFAULT 0,
  PRIMARY KEY (organization_id, day)
);

-- Down Migration
DROP TABLE mail_event_quotas;
DROP TABLE mail_automation_run_change_outbox;
DROP TABLE mail_automation_run_changes;
DROP TABLE mail_automation_runs;
DROP TABLE mail_inbound_event_outbox;
DROP TABLE mail_inbound_events;
DROP TABLE mail_automations;
