-- Up Migration
-- The broadcast report's counts, kept as events and deliveries are written, so a report reads a
-- few rows whatever the broadcast's size. A message counts once per flag (the flags table);
-- clicks per link count every click.
--   recipients (written by the fan-out), sent (delivered or bounced), dropped (failed or
--   suppressed at the sender), delivered, bounced, complained, opened (an open or a click),
--   clicked, unsubscribed
CREATE TABLE mail_broadcast_counts (
  broadcast_id  uuid NOT NULL REFERENCES mail_broadcasts (id) ON DELETE CASCADE,
  variant       text NOT NULL,  -- 'A', 'B', or '' for none
  flag          text NOT NULL,
  n             bigint NOT NULL,
  PRIMARY KEY (broadcast_id, variant, flag)
);

CREATE TABLE mail_broadcast_message_flags (
  message_id  uuid NOT NULL,
  flag        text NOT NULL,
  PRIMARY KEY (message_id, flag)
);

CREATE TABLE mail_broadcast_link_clicks (
  broadcast_id  uuid NOT NULL REFERENCES mail_broadcasts (id) ON DELETE CASCADE,
  url           text NOT NULL,
  clicks        bigint NOT NULL,
  PRIMARY KEY (broadcast_id, url)
);

-- Counts the message's flags once each, when it is a broadcast's message.
CREATE FUNCTION mail_broadcast_flag(message uuid, flags text[], clicked_url text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  r record;
  f text;
BEGIN
  SELECT broadcast_id, coalesce(variant, '') AS variant INTO r FROM mail_broadcast_recipients WHERE message_id = message;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  FOREACH f IN ARRAY flags LOOP
    INSERT INTO mail_broadcast_message_flags (message_id, flag) VALUES (message, f) ON CONFLICT DO NOTHING;
    IF FOUND THEN
      INSERT INTO mail_broadcast_counts (broadcast_id, variant, flag, n) VALUES (r.broadcast_id, r.variant, f, 1)
      ON CONFLICT (broadcast_id, variant, flag) DO UPDATE SET n = mail_broadcast_counts.n + 1;
    END IF;
  END LOOP;
  IF clicked_url IS NOT NULL THEN
    INSERT INTO mail_broadcast_link_clicks (broadcast_id, url, clicks) VALUES (r.broadcast_id, clicked_url, 1)
    ON CONFLICT (broadcast_id, url) DO UPDATE SET clicks = mail_broadcast_link_clicks.clicks + 1;
  END IF;
END $$;

CREATE FUNCTION mail_events_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mail_broadcast_flag(NEW.message_id,
    CASE NEW.type WHEN 'delivered' THEN ARRAY['sent', 'delivered'] WHEN 'bounced' THEN ARRAY['sent', 'bounced']
                  WHEN 'clicked' THEN ARRAY['opened', 'clicked'] ELSE ARRAY[NEW.type] END,
    CASE WHEN NEW.type = 'clicked' THEN NEW.url END);
  RETURN NULL;
END $$;
CREATE TRIGGER mail_events_count AFTER INSERT ON mail_events FOR EACH ROW EXECUTE FUNCTION mail_events_count();

CREATE FUNCTION mail_deliveries_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mail_broadcast_flag(NEW.message_id, ARRAY['dropped'], NULL);
  RETURN NULL;
END $$;
CREATE TRIGGER mail_deliveries_dropped AFTER INSERT OR UPDATE OF state ON mail_deliveries
  FOR EACH ROW WHEN (NEW.state IN ('failed', 'suppressed')) EXECUTE FUNCTION mail_deliveries_count();

-- Down Migration
DROP TRIGGER mail_deliveries_dropped ON mail_deliveries;
DROP FUNCTION mail_deliveries_count();
DROP TRIGGER mail_events_count ON mail_events;
DROP FUNCTION mail_events_count();
DROP FUNCTION mail_broadcast_flag(uuid, text[], text);
DROP TABLE mail_broadcast_link_clicks;
DROP TABLE mail_broadcast_message_flags;
DROP TABLE mail_broadcast_counts;
