-- Up Migration
-- Opens and clicks made by machines (privacy proxies that fetch every image on arrival, link
-- scanners, HEAD checks; src/mail/tracking/automated-fetch.ts) are kept as events, flagged, and
-- are not a person's open or click: the report's counters count them under flags of their own
-- (opened_automated, clicked_automated, once per message), not as opened, clicked or top links.
ALTER TABLE mail_events ADD COLUMN automated boolean NOT NULL DEFAULT false;

CREATE OR REPLACE FUNCTION mail_events_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.automated THEN
    PERFORM mail_broadcast_flag(NEW.message_id, ARRAY[NEW.type || '_automated'], NULL);
    RETURN NULL;
  END IF;
  PERFORM mail_broadcast_flag(NEW.message_id,
    CASE NEW.type WHEN 'delivered' THEN ARRAY['sent', 'delivered'] WHEN 'bounced' THEN ARRAY['sent', 'bounced']
                  WHEN 'clicked' THEN ARRAY['opened', 'clicked'] ELSE ARRAY[NEW.type] END,
    CASE WHEN NEW.type = 'clicked' THEN NEW.url END);
  RETURN NULL;
END $$;

-- Down Migration
CREATE OR REPLACE FUNCTION mail_events_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mail_broadcast_flag(NEW.message_id,
    CASE NEW.type WHEN 'delivered' THEN ARRAY['sent', 'delivered'] WHEN 'bounced' THEN ARRAY['sent', 'bounced']
                  WHEN 'clicked' THEN ARRAY['opened', 'clicked'] ELSE ARRAY[NEW.type] END,
    CASE WHEN NEW.type = 'clicked' THEN NEW.url END);
  RETURN NULL;
END $$;
ALTER TABLE mail_events DROP COLUMN automated;
