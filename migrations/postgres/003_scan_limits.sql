-- Up Migration
-- Scans counted per link by the scan-limit actor (bots excluded). The actor
-- writes the count and its last applied offset (actor_offsets, a platform
-- table: 007_platform_actor_offsets.sql) in one transaction, so a replayed
-- message is never counted twice.
CREATE TABLE link_scan_counts (
  link_id  uuid PRIMARY KEY REFERENCES links (id),
  scans    bigint NOT NULL DEFAULT 0
);

-- Down Migration
DROP TABLE link_scan_counts;
