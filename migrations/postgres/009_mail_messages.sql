-- Up Migration
-- An organization's suppression list: addresses no message goes to.
CREATE TABLE mail_suppressions (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id  uuid NOT NULL REFERENCES mail_organizations (id),
  email            text NOT NULL,
  reason           text NOT NULL CHECK (reason IN ('manual', 'bounce', 'complaint', 'unsubscribe')),
  created_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, email)
);
CREATE INDEX mail_suppressions_list ON mail_suppressions (organization_id, created_at DESC, id DESC);

-- Messages accepted by POST /emails and /emails/batch (later also broadcasts and automations),
-- with their idempotency key. A message is written once; what is still to be published is in
-- mail_message_outbox.
CREATE TABLE mail_messages (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id  uuid NOT NULL REFERENCES mail_organizations (id),
  key_id           uuid,
  idempotency_key  text,
  -- SHA-256 of the request as accepted, to tell a repeat from another request under a used key.
  request_hash     bytea,
  kind             text NOT NULL DEFAULT 'transactional',
  from_address     text NOT NULL,
  from_domain      text NOT NULL,
  to_addresses     text[] NOT NULL,
  cc_addresses     text[] NOT NULL DEFAULT '{}',
  bcc_addresses    text[] NOT NULL DEFAULT '{}',
  reply_to         text[] NOT NULL DEFAULT '{}',
  subject          text NOT NULL,
  html             text,
  text_body        text,
  headers          jsonb NOT NULL DEFAULT '{}',
  tags             jsonb NOT NULL DEFAULT '[]',
  topic_id         text,
  -- Recipients dropped because they are on the suppression list when the message was accepted.
  suppressed       text[] NOT NULL DEFAULT '{}',
  -- Recipients the message goes to (to + cc + bcc, without the suppressed): what the daily allowances count.
  recipient_count  integer NOT NULL,
  attachments      jsonb NOT NULL DEFAULT '[]',
  status           text NOT NULL CHECK (status IN ('queued', 'scheduled', 'suppressed')),
  scheduled_at     timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, idempotency_key)
);
CREATE INDEX mail_messages_list ON mail_messages (organization_id, created_at DESC, id DESC);

-- Attachment bytes stay in Postgres; the topic carries only their names and sizes.
CREATE TABLE mail_message_attachments (
  message_id    uuid NOT NULL REFERENCES mail_messages (id) ON DELETE CASCADE,
  position      integer NOT NULL,
  filename      text NOT NULL,
  content_type  text,
  content_id    text,
  content       bytea NOT NULL,
  PRIMARY KEY (message_id, position)
);

-- Down Migration
DROP TABLE mail_message_attachments;
DROP TABLE mail_messages;
DROP TABLE mail_suppressions;
