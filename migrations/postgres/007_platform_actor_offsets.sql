-- Up Migration
-- The platform's record of the last offset each actor group applied per
-- partition (src/platform/actors/applied-offsets.ts), written in the same
-- transaction as the effect so a replayed message is skipped.
-- Databases migrated before this file got the table from 003_scan_limits.sql,
-- hence IF NOT EXISTS.
CREATE TABLE IF NOT EXISTS actor_offsets (
  group_id   text NOT NULL,
  topic      text NOT NULL,
  partition  integer NOT NULL,
  "offset"   bigint NOT NULL,
  PRIMARY KEY (group_id, topic, partition)
);

-- Down Migration
DROP TABLE actor_offsets;
