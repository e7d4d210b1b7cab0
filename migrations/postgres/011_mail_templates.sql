-- Up Migration
-- Templates and their versions: the newest version may be a draft; a published version never changes.
CREATE TABLE mail_templates (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id  uuid NOT NULL REFERENCES mail_organizations (id),
  slug             text NOT NULL,
  name             text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, slug)
);
CREATE INDEX mail_templates_list ON mail_templates (organization_id, created_at DESC, id DESC);

CREATE TABLE mail_template_versions (
  template_id   uuid NOT NULL REFERENCES mail_templates (id) ON DELETE CASCADE,
  version       integer NOT NULL CHECK (version >= 1),
  subject       text,
  html          text,
  text_body     text,
  published_at  timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (template_id, version)
);

-- Down Migration
DROP TABLE mail_template_versions;
DROP TABLE mail_templates;
