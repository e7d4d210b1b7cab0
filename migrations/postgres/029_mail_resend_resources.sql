-- Up Migration
-- Resend's resources at the root paths (a second HTTP face of the mail product) need a few
-- things /api/v1 had no word for.

-- A domain's region, as Resend takes it: kept and answered. It does not move mail anywhere (one
-- installation sends from where it runs).
ALTER TABLE mail_domains ADD COLUMN region text NOT NULL DEFAULT 'us-east-1';

-- A topic's description (Resend's topics carry one).
ALTER TABLE mail_topics ADD COLUMN description text;

-- Resend's segments are membership lists: the contacts added to a segment. A segment's contacts
-- are its members and the contacts its filter matches (a segment made at the root has a filter
-- that matches none, so it is its members alone).
CREATE TABLE mail_segment_members (
  segment_id  uuid NOT NULL REFERENCES mail_segments (id) ON DELETE CASCADE,
  contact_id  uuid NOT NULL REFERENCES mail_contacts (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (segment_id, contact_id)
);
CREATE INDEX mail_segment_members_by_contact ON mail_segment_members (contact_id);

-- Contact properties declared for the organization (Resend's contact-properties): a key, a type
-- and the value used when a contact has none.
CREATE TABLE mail_contact_properties (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id  uuid NOT NULL REFERENCES mail_organizations (id),
  key              text NOT NULL,
  type             text NOT NULL CHECK (type IN ('string', 'number')),
  fallback_value   jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, key)
);
CREATE INDEX mail_contact_properties_list ON mail_contact_properties (organization_id, created_at DESC, id DESC);

-- Down Migration
DROP TABLE mail_contact_properties;
DROP TABLE mail_segment_members;
ALTER TABLE mail_topics DROP COLUMN description;
ALTER TABLE mail_domains DROP COLUMN region;
