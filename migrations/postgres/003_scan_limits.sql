-- Up Migration
-- Scans counted per link by the scan-limit actor (bots excluded), and the last
-- offset each actor group applied per partition: the count and the offset are
-- written in one transaction, so a replayed message is never counted twice.
CREATE TABLE link_scan_counts (
  link_id  uuid PRIMARY KEY REFERENCES links (id),
  scans    bigint NOT NULL DEFAULT 0
);

CREATE TABLE actor_offsets (
  group_id   text NOT NULL,
  topic      text NOT NULL,
  partition  integer NOT NULL,
  "offset"   bigint NOT NULL,
  PRIMARY KEY (group_id, topic, partition)
);

-- Down Migration
DROP TABLE actor_offsets;
DROP TABLE link_scan_counts;
