-- QR scans told from clicks (issue 43, item 4): a scan records `trigger`, qr when the visitor
-- scanned one of our QR codes (the short URL's ?qr marker), else link. Scans stored before have
-- the column's default, link, as the issue asks. scans_link_triggers counts the scans that are not
-- link per link, hour and country (so the link and country filters apply), fed like the other
-- rollups by a view on every insert; analytics take the link scans as the total less these
-- (trigger-queries.ts), so most scans add no row here and nothing is backfilled.
-- ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: the column comes first, and a file cut
-- short after it fails here when run again (drop the column by hand, then migrate again).
ALTER TABLE {db}.scans ADD COLUMN trigger String DEFAULT 'link';

DROP TABLE IF EXISTS {db}.scans_link_triggers_mv;
DROP TABLE IF EXISTS {db}.scans_link_triggers;

CREATE TABLE IF NOT EXISTS {db}.scans_link_triggers (
  workspace_id String,
  link_id      String,
  hour         DateTime,
  is_bot       UInt8,
  country      String,
  trigger      String,
  scans        UInt64
) ENGINE = SummingMergeTree(scans)
PARTITION BY toYYYYMM(hour)
ORDER BY (workspace_id, hour, link_id, is_bot, country, trigger);

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_link_triggers_mv TO {db}.scans_link_triggers AS
SELECT workspace_id, link_id, toStartOfHour(ts) AS hour, is_bot, country, trigger, count() AS scans
FROM {db}.scans
WHERE trigger != 'link'
GROUP BY workspace_id, link_id, hour, is_bot, country, trigger;
