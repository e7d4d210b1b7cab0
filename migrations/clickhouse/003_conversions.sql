-- Conversions and tracked clicks, one row per conversion id. The conversion
-- sink inserts each id once (like the scan sink); ReplacingMergeTree on
-- (workspace_id, ts, conversion_id) is the backstop.
CREATE TABLE IF NOT EXISTS {db}.conversions (
  conversion_id  String,
  type           String,
  event          String,
  workspace_id   String,
  link_id        String,
  scan_id        String,
  click_id       String,
  campaign_id    String,
  ts             DateTime,
  amount_micros  Int64,
  currency       String,
  external_id    String,
  metadata       String
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (workspace_id, ts, conversion_id);
