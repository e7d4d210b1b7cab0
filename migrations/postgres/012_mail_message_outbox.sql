-- Up Migration
-- The messages still to be published to mail.messages: a row is written with its message and
-- deleted once the message is on the topic. A publisher holds a short lease on the rows it is
-- publishing, so a request, a repeat of its key and the relay never publish one message at once,
-- and the rows of a publisher that died are relayed when its lease runs out. Kept apart from the
-- wide message rows, which are then written once and never updated for publication.
CREATE TABLE mail_message_outbox (
  message_id   uuid PRIMARY KEY REFERENCES mail_messages (id) ON DELETE CASCADE,
  created_at   timestamptz NOT NULL,
  lease_until  timestamptz
);
CREATE INDEX mail_message_outbox_age ON mail_message_outbox (created_at);

-- Down Migration
DROP TABLE mail_message_outbox;
