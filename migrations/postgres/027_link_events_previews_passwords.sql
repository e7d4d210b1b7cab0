-- Up Migration
-- Issue 33, items 9, 5 and 4.
--
-- 9. Link events for webhooks. An endpoint chooses its events; endpoints made before
-- keep the one event that existed (scan.created). Every change of a link (a new
-- version) is recorded as link.created, link.updated or link.deleted (active → inactive,
-- the soft delete) in the same transaction as the change, with the link as it was
-- then, but only while its workspace has an endpoint that wants that event. The
-- links-link-events worker turns these rows into deliveries when the links.changelog
-- message of that version (or a newer one) reaches it, and deletes them.
ALTER TABLE webhook_endpoints ADD COLUMN events text[] NOT NULL DEFAULT '{scan.created}';

CREATE TABLE link_events (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  link_id       uuid NOT NULL,
  workspace_id  uuid NOT NULL,
  event_type    text NOT NULL CHECK (event_type IN ('link.created', 'link.updated', 'link.deleted')),
  version       bigint NOT NULL,
  -- The links row after the change, its password hash replaced by 'set' (or null).
  link          jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
);
CREATE INDEX link_events_link ON link_events (link_id, version);

CREATE FUNCTION record_link_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  kind text;
BEGIN
  -- A write that does not bump the version is not a change of the link.
  IF TG_OP = 'UPDATE' AND OLD.version = NEW.version THEN RETURN NULL; END IF;
  IF TG_OP = 'INSERT' THEN kind := 'link.created';
  ELSIF OLD.is_active AND NOT NEW.is_active THEN kind := 'link.deleted';
  ELSE kind := 'link.updated';
  END IF;
  IF EXISTS (SELECT 1 FROM webhook_endpoints WHERE workspace_id = NEW.workspace_id AND kind = ANY (events)) THEN
    INSERT INTO link_events (link_id, workspace_id, event_type, version, link)
    -- The hash itself is not copied; only whether there is one (passwordProtected).
    VALUES (NEW.id, NEW.workspace_id, kind, NEW.version,
            (to_jsonb(NEW) - 'password_hash') || jsonb_build_object('password_hash', CASE WHEN NEW.password_hash IS NULL THEN NULL ELSE 'set' END));
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER links_record_event AFTER INSERT OR UPDATE ON links FOR EACH ROW EXECUTE FUNCTION record_link_event();

-- 5. Preview cards: what link-preview crawlers are shown instead of the redirect.
ALTER TABLE links ADD COLUMN title text, ADD COLUMN description text, ADD COLUMN image text;

-- 4. Password-protected links: scrypt$<N>$<r>$<p>$<salt>$<hash>, never answered.
ALTER TABLE links ADD COLUMN password_hash text;

-- Down Migration
ALTER TABLE links DROP COLUMN password_hash;
ALTER TABLE links DROP COLUMN title, DROP COLUMN description, DROP COLUMN image;
DROP TRIGGER links_record_event ON links;
DROP FUNCTION record_link_event();
DROP TABLE link_events;
ALTER TABLE webhook_endpoints DROP COLUMN events;
