-- A/B destinations (issue 33, item 3): a scan records the test variant (its URL) the
-- visitor was sent to, '' for none; scans_link_variants counts the scans and visitors of
-- each variant per link, hour and country (so a country filter applies), fed like the other rollups by a view on every insert, so
-- analytics and the funnel split by variant without reading the scans. Only scans with a
-- variant enter it. Scans stored before have none, so nothing is backfilled.
-- ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: the column comes first, and a file cut
-- short after it fails here when run again (drop the column by hand, then migrate again).
ALTER TABLE {db}.scans ADD COLUMN variant String DEFAULT '';

DROP TABLE IF EXISTS {db}.scans_link_variants_mv;
DROP TABLE IF EXISTS {db}.scans_link_variants;

CREATE TABLE IF NOT EXISTS {db}.scans_link_variants (
  workspace_id String,
  link_id      String,
  hour         DateTime,
  is_bot       UInt8,
  country      String,
  variant      String,
  scans        AggregateFunction(count),
  visitors     AggregateFunction(uniqHLL12, String)
) ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (workspace_id, link_id, hour, is_bot, country, variant);

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_link_variants_mv TO {db}.scans_link_variants AS
SELECT workspace_id, link_id, toStartOfHour(ts) AS hour, is_bot, country, variant, countState() AS scans, uniqHLL12State(visitor_id) AS visitors
FROM {db}.scans
WHERE variant != ''
GROUP BY workspace_id, link_id, hour, is_bot, country, variant;
