-- Up Migration
-- What happened to sent messages: delivered, bounced, complained, opened, clicked, unsubscribed.
-- The broadcast report counts distinct messages per type from here; each row is published to
-- mail.events through mail_event_outbox (written in the same statement).
CREATE TABLE mail_events (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id  uuid NOT NULL,
  message_id       uuid NOT NULL,
  type             text NOT NULL CHECK (type IN ('delivered', 'bounced', 'complained', 'opened', 'clicked', 'unsubscribed')),
  recipient        text,
  url              text,
  detail           text,
  occurred_at      timestamptz NOT NULL DEFAULT now(),
  -- Names an event that happens once (a hand-over's outcome, a report's verdict), so recording
  -- it again (a retry after a crash, a report received twice) adds nothing. NULL for opens and clicks.
  once_key         text UNIQUE
);
CREATE INDEX mail_events_message ON mail_events (message_id, type);

CREATE TABLE mail_event_outbox (
  event_id    uuid PRIMARY KEY,
  created_at  timestamptz NOT NULL
);
CREATE INDEX mail_event_outbox_age ON mail_event_outbox (created_at);

-- Down Migration
DROP TABLE mail_event_outbox;
DROP TABLE mail_events;
