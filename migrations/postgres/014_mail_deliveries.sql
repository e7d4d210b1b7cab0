-- Up Migration
-- The sender's queue: one row per message read from mail.messages (the topic may repeat a message;
-- its id is the key). A message goes out when it is due and its organization has no earlier
-- message waiting (order kept per organization), within the daily allowances (mail_daily_usage)
-- and the platform send rate. Its attempts are kept for GET /emails/:id.
CREATE TABLE mail_deliveries (
  message_id       uuid PRIMARY KEY,
  organization_id  uuid NOT NULL,
  from_domain      text NOT NULL,
  -- When it may first go out (the message's scheduled_at, or when it was accepted): the order of
  -- an organization's messages.
  queued_at        timestamptz NOT NULL,
  -- When it was accepted: breaks ties between messages scheduled for one moment.
  accepted_at      timestamptz NOT NULL,
  -- queued: waiting for its turn, a cap or the next UTC day; sending: leased by a sender until
  -- lease_until; retrying: a transient failure, next attempt at next_attempt_at; then one of
  -- sent (handed over), bounced (permanent refusal), failed (4 transient failures), suppressed
  -- (every recipient on the suppression list when it was due).
  state            text NOT NULL CHECK (state IN ('queued', 'sending', 'retrying', 'sent', 'bounced', 'failed', 'suppressed')),
  next_attempt_at  timestamptz NOT NULL,
  lease_until      timestamptz,
  -- Names the sender's hold, so that only the holder records the outcome.
  lease_token      uuid,
  -- The UTC day (by the sender's clock) whose allowances it was counted against, and how many:
  -- counted once, whatever the retries.
  counted_day      date,
  counted          integer,
  attempts         jsonb NOT NULL DEFAULT '[]',
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_deliveries_waiting ON mail_deliveries (organization_id, queued_at, accepted_at, message_id) WHERE state IN ('queued', 'sending');
CREATE INDEX mail_deliveries_retrying ON mail_deliveries (next_attempt_at) WHERE state = 'retrying';

-- Emails counted per UTC day and scope: 'platform', 'org:<id>', 'domain:<org id>:<name>'.
CREATE TABLE mail_daily_usage (
  scope  text NOT NULL,
  day    date NOT NULL,
  used   integer NOT NULL,
  PRIMARY KEY (scope, day)
);

-- Down Migration
DROP TABLE mail_daily_usage;
DROP TABLE mail_deliveries;
