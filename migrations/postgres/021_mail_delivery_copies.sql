-- Up Migration
-- A message about a topic goes out as one copy per recipient, each with its own one-click
-- unsubscribe link: the recipients whose copy the relay took, so that a retry after a failure
-- of a later copy (or a sender stopping) sends only the others.
ALTER TABLE mail_deliveries ADD COLUMN handed_to text[] NOT NULL DEFAULT '{}';

-- Down Migration
ALTER TABLE mail_deliveries DROP COLUMN handed_to;
