-- Up Migration
-- POST /emails/:id/cancel: a message not yet handed over may be canceled; it keeps its row with
-- status canceled, and its queue row (if the sender has queued it) turns canceled too, which no
-- sender takes. A canceled broadcast message counts as dropped in its broadcast's report, as a
-- failed or suppressed one does.
ALTER TABLE mail_messages DROP CONSTRAINT mail_messages_status_check;
ALTER TABLE mail_messages ADD CONSTRAINT mail_messages_status_check CHECK (status IN ('queued', 'scheduled', 'suppressed', 'canceled'));
ALTER TABLE mail_deliveries DROP CONSTRAINT mail_deliveries_state_check;
ALTER TABLE mail_deliveries ADD CONSTRAINT mail_deliveries_state_check
  CHECK (state IN ('queued', 'sending', 'retrying', 'sent', 'bounced', 'failed', 'suppressed', 'canceled'));
DROP TRIGGER mail_deliveries_dropped ON mail_deliveries;
CREATE TRIGGER mail_deliveries_dropped AFTER INSERT OR UPDATE OF state ON mail_deliveries
  FOR EACH ROW WHEN (NEW.state IN ('failed', 'suppressed', 'canceled')) EXECUTE FUNCTION mail_deliveries_count();

-- GET /emails lists an organization's messages newest first: the list index migration 013 dropped
-- while no endpoint listed them comes back (one index entry per message written).
CREATE INDEX mail_messages_list ON mail_messages (organization_id, created_at DESC, id DESC);

-- Down Migration
DROP INDEX mail_messages_list;
DROP TRIGGER mail_deliveries_dropped ON mail_deliveries;
CREATE TRIGGER mail_deliveries_dropped AFTER INSERT OR UPDATE OF state ON mail_deliveries
  FOR EACH ROW WHEN (NEW.state IN ('failed', 'suppressed')) EXECUTE FUNCTION mail_deliveries_count();
ALTER TABLE mail_deliveries DROP CONSTRAINT mail_deliveries_state_check;
ALTER TABLE mail_deliveries ADD CONSTRAINT mail_deliveries_state_check
  CHECK (state IN ('queued', 'sending', 'retrying', 'sent', 'bounced', 'failed', 'suppressed'));
ALTER TABLE mail_messages DROP CONSTRAINT mail_messages_status_check;
ALTER TABLE mail_messages ADD CONSTRAINT mail_messages_status_check CHECK (status IN ('queued', 'scheduled', 'suppressed'));
