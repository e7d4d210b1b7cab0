-- Up Migration
-- What each accepted message costs Postgres to write, cut to what a reader uses:
-- - no list index: no endpoint lists messages (GET /emails/:id reads by primary key);
-- - no foreign key from a message to its organization: messages are only written with the
--   organization of an authenticated key, and organizations are never deleted;
-- - no foreign key from an outbox row to its message: both are written by one statement, and
--   messages are never deleted;
-- - no lease on outbox rows: a publisher holds a row lock on the rows it publishes
--   (row-outbox.ts), which a crash releases at once.
DROP INDEX mail_messages_list;
ALTER TABLE mail_messages DROP CONSTRAINT mail_messages_organization_id_fkey;
ALTER TABLE mail_message_outbox DROP CONSTRAINT mail_message_outbox_message_id_fkey;
ALTER TABLE mail_message_outbox DROP COLUMN lease_until;

-- Down Migration
ALTER TABLE mail_message_outbox ADD COLUMN lease_until timestamptz;
ALTER TABLE mail_message_outbox ADD CONSTRAINT mail_message_outbox_message_id_fkey FOREIGN KEY (message_id) REFERENCES mail_messages (id) ON DELETE CASCADE;
ALTER TABLE mail_messages ADD CONSTRAINT mail_messages_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES mail_organizations (id);
CREATE INDEX mail_messages_list ON mail_messages (organization_id, created_at DESC, id DESC);
