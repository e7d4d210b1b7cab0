-- Up Migration
-- Scan ids the scan-limit actor has counted: the scans topic is at-least-once, so a scan can
-- arrive twice at different offsets; it is counted only the first time. Kept as long as the
-- topic keeps scans (7 days) plus a day, after which no duplicate can arrive.
CREATE TABLE counted_scans (
  scan_id   uuid PRIMARY KEY,
  seen_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX counted_scans_seen ON counted_scans (seen_at);

-- Down Migration
DROP TABLE counted_scans;
