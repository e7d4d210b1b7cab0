-- Up Migration
-- The outcome of each scan erasure (issue 50), readable at GET /api/v1/privacy/erasures/:id:
-- pending until the privacy runner finishes it as done, not_found (a visitor's click ID whose scan
-- never arrived) or failed (its attempts used up). A failing erasure is tried again after a
-- growing delay (next_attempt_at), so it delays no other; the runner takes the due ones by
-- next_attempt_at. The counts are what the erasure covered, once known.
ALTER TABLE scan_erasures
  ADD COLUMN status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'not_found', 'failed')),
  ADD COLUMN attempts         integer NOT NULL DEFAULT 0,
  ADD COLUMN next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN last_error       text,
  ADD COLUMN scans            bigint,
  ADD COLUMN conversions      integer,
  ADD COLUMN deliveries       integer;
-- Erasures finished before: a visitor's whose scan was never found erased nothing.
UPDATE scan_erasures SET status = CASE WHEN kind = 'visitor' AND visitor_id IS NULL THEN 'not_found' ELSE 'done' END WHERE done_at IS NOT NULL;
DROP INDEX scan_erasures_pending;
CREATE INDEX scan_erasures_due ON scan_erasures (next_attempt_at) WHERE status = 'pending';

-- Down Migration
DROP INDEX scan_erasures_due;
CREATE INDEX scan_erasures_pending ON scan_erasures (requested_at) WHERE done_at IS NULL;
ALTER TABLE scan_erasures DROP COLUMN deliveries, DROP COLUMN conversions, DROP COLUMN scans, DROP COLUMN last_error,
  DROP COLUMN next_attempt_at, DROP COLUMN attempts, DROP COLUMN status;
