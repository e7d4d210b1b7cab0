-- Up Migration
-- Scan limits are now held to the scans stored in ClickHouse (the daily link
-- rollup), and the scan sink closes links at their limit. The scan-limit
-- actor's own count, its record of counted scan ids and its applied offsets
-- are no longer kept.
DROP TABLE IF EXISTS counted_scans;
DROP TABLE IF EXISTS link_scan_counts;
DELETE FROM actor_offsets WHERE group_id = 'scan-limits';

-- Down Migration
CREATE TABLE link_scan_counts (
  link_id  uuid PRIMARY KEY REFERENCES links (id),
  scans    bigint NOT NULL DEFAULT 0
);
CREATE TABLE counted_scans (
  scan_id   uuid PRIMARY KEY,
  seen_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX counted_scans_seen ON counted_scans (seen_at);
