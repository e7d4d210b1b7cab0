-- Scans of short links, one row per scan. The sink inserts each scan once (see
-- src/links/scans/scan-sink.ts); ReplacingMergeTree on (workspace_id, ts, scan_id) is the backstop:
-- a scan that still got in twice has the same key, and merges keep one row.
CREATE TABLE IF NOT EXISTS {db}.scans (
  scan_id       String,
  click_id      String,
  workspace_id  String,
  link_id       String,
  short_id      String,
  campaign_id   String,
  ts            DateTime,
  destination   String,
  country       String,
  region        String,
  city          String,
  device        String,
  os            String,
  browser       String,
  referrer      String,
  referrer_host String,
  utm_source    String,
  utm_medium    String,
  utm_campaign  String,
  utm_term      String,
  utm_content   String,
  is_bot        UInt8,
  user_agent    String,
  visitor_id    String
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (workspace_id, ts, scan_id);
