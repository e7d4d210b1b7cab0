-- Up Migration
-- Erasure and retention of scans (issue 43, item 6; src/links/privacy/).
-- A workspace keeps its scans scan_retention_days (NULL: forever); the privacy runner drops
-- older ones once a day.
ALTER TABLE workspaces ADD COLUMN scan_retention_days integer CHECK (scan_retention_days BETWEEN 1 AND 3650);

-- Erasures asked for through the API (202), applied by the privacy runner in batches: a visitor's
-- scans (by the click ID of one of them) or a link's. `hours` holds the (UTC hour) buckets of the
-- rollups the erased scans were counted in, written before the scans are deleted, so a run cut
-- short still knows which rollup rows to recompute.
CREATE TABLE scan_erasures (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id  uuid NOT NULL REFERENCES workspaces (id),
  kind          text NOT NULL CHECK (kind IN ('visitor', 'link')),
  scan_id       text,
  link_id       uuid,
  -- Found on the first run (a visitor's): the visitor and every scan of theirs, with the hours.
  visitor_id    text,
  scan_ids      text[],
  hours         timestamptz[],
  requested_at  timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  done_at       timestamptz,
  CHECK ((kind = 'visitor') = (scan_id IS NOT NULL) AND (kind = 'link') = (link_id IS NOT NULL))
);
CREATE INDEX scan_erasures_pending ON scan_erasures (requested_at) WHERE done_at IS NULL;

-- When the retention pass last ran to completion (one row): a worker runs it when a day has passed.
CREATE TABLE scan_retention_runs (
  name         text PRIMARY KEY,
  finished_at  timestamptz NOT NULL
);

-- Down Migration
DROP TABLE scan_retention_runs;
DROP TABLE scan_erasures;
ALTER TABLE workspaces DROP COLUMN scan_retention_days;
