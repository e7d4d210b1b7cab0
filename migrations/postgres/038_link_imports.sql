-- CSV imports of links (POST /api/v1/links/import): at most one running per workspace, and the
-- rows it has read so far, staged in short statements while the body arrives and moved into
-- links in one transaction at its end, so no connection or lock waits on the client.
CREATE TABLE link_imports (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id  uuid NOT NULL UNIQUE REFERENCES workspaces (id) ON DELETE CASCADE,
  started_at    timestamptz NOT NULL DEFAULT now(),
  -- Past this the import is over whatever its process did (stopped mid-import): another may start.
  expires_at    timestamptz NOT NULL
);

CREATE TABLE link_import_rows (
  import_id  uuid NOT NULL REFERENCES link_imports (id) ON DELETE CASCADE,
  -- The row's line in the file (its last line): unique within an import, and the order rows are moved in.
  line       integer NOT NULL,
  link       jsonb NOT NULL,
  PRIMARY KEY (import_id, line)
);
