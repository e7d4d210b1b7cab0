-- Orphan visits (issue 43, item 3): requests on a branded domain that named no link and were sent
-- on by its fallbacks (base_url: its root; invalid_short_url: an unknown short ID), one row per
-- visit, inserted once by the orphan visit sink (src/links/orphans/orphan-visit-sink.ts);
-- ReplacingMergeTree on (workspace_id, ts, visit_id) is the backstop, as for scans. Listed newest
-- first by GET /api/v1/analytics/orphan-visits, which reads a workspace's rows of a time range.
CREATE TABLE IF NOT EXISTS {db}.orphan_visits (
  visit_id      String,
  workspace_id  String,
  domain_id     String,
  domain        String,
  path          String,
  type          String,
  ts            DateTime,
  country       String,
  device        String,
  is_bot        UInt8,
  referrer_host String
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (workspace_id, ts, visit_id);
